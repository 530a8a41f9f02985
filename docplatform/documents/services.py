"""Writes of the documentation product. Each page action makes a new revision through
``services.space_content_update`` (the one service the REST API uses too), so
``space_content_updated`` fires the same whichever door was used; nothing here writes pages
itself.

Nothing is lost: every edit names the revision it was made from (``based_on``). When the
space moved on meanwhile, an edit of a page that nobody else touched is applied on top of
the new revision; an edit of a page that changed meanwhile is merged with that change, line
by line against the page as it was (``merging``): changes that do not overlap are both kept
with no question; overlapping ones raise PageConflict carrying the hunks, so the person
resolves each (theirs, mine, both, or an edit) and nothing is written until they do.
"""

import hashlib
from collections import defaultdict
from datetime import timedelta

from django.core.exceptions import ValidationError
from django.db import IntegrityError, transaction
from django.utils import timezone

from .. import content, services
from ..events import Visitor
from ..models import PagePresence, Revision, Space, SpaceVisit
from .merging import merge_page, merge_pages, placed_after
from .selectors import nearest_parent, page_dicts

#: A visitor's reads of one space fire ``space_view`` at most this often (README).
READER_VIEW_INTERVAL = timedelta(minutes=5)


class PageConflict(Exception):
    """The page was changed (or removed) in a revision made since ``based_on``, and the change
    overlaps this one: ``current`` is that revision, ``theirs`` the page as it is now (None
    when it was removed), ``clash`` what overlaps (None for a removal), ``base`` the page as
    it was in ``based_on``."""

    def __init__(self, *, current, theirs: dict | None, clash=None, base: dict | None = None):
        super().__init__("the page changed since it was opened")
        self.current, self.theirs, self.clash, self.base = current, theirs, clash, base


def page_save(
    *,
    space: Space,
    path: str,
    title: str,
    body: str,
    new_path: str | None = None,
    condition: str | None = None,
    message: str = "",
    author=None,
    based_on: str,
) -> Revision:
    """Save one page's title, Markdown, (``new_path``) its path and its ``condition`` (None
    keeps the page's), edited from the revision ``based_on``. Raises ValidationError naming
    the field (``title``, ``path``, ``condition``, ``body``), or PageConflict."""
    new_path = path if new_path is None else new_path
    base = _base_pages(space, based_on)
    mine = base.get(path)
    if mine is None:
        raise ValidationError({"path": ["no page has this path in that revision"]})
    edited = {"path": new_path, "title": title, "body": body}
    edited["condition"] = mine.get("condition", "") if condition is None else condition

    def merged_with(theirs: dict | None):
        """The edit on top of theirs, when theirs changed the page since ``based_on``."""
        if theirs is None:
            raise PageConflict(current=space.current_revision, theirs=None, base=mine)
        merged, clash = merge_page(mine, theirs, edited)
        if clash is not None:
            raise PageConflict(
                current=space.current_revision, theirs=theirs, clash=clash, base=mine
            )
        return lambda pages: check_page_edit(pages, path, merged)

    return _write_on_top(
        space,
        based_on=based_on,
        touched=path,
        change=lambda pages: check_page_edit(pages, path, edited),
        message=message or _default_message("Edit", title),
        author=author,
        base_page=mine,
        merged_with=merged_with,
    )


class ContentConflict(Exception):
    """A set of pages written from a revision that is not the space's current one any more,
    whose changes overlap what was written since: ``clashes`` (``merging.PageClash``)."""

    def __init__(self, *, current: Revision | None, clashes: list):
        super().__init__("changes made since that revision overlap these")
        self.current, self.clashes = current, clashes


def space_pages_write(
    *, space: Space, pages: list[dict], message: str = "", author=None, based_on: str | None
) -> Revision:
    """Write a space's whole set of pages, made from the revision ``based_on`` (None: on top
    of whatever is current). When the space moved on since, the pages are merged with what
    changed meanwhile, page by page and line by line (``merging.merge_pages``); changes that
    overlap raise ContentConflict and nothing is written. The REST API's door for writes."""
    if based_on is None:
        return services.space_content_update(
            space=space, pages=pages, message=message, author=author
        )
    if not Revision.objects.filter(pk=based_on, space=space).exists():
        raise ValidationError({"baseRevision": ["is not a revision of this space"]})
    base = page_dicts(based_on)
    for _attempt in range(3):
        space.refresh_from_db(fields=["current_revision"])
        current = space.current_revision_id
        written = pages
        if current != based_on:
            written, clashes = merge_pages(base, page_dicts(current) if current else [], pages)
            if clashes:
                raise ContentConflict(current=space.current_revision, clashes=clashes)
        try:
            return services.space_content_update(
                space=space, pages=written, message=message, author=author, based_on=current
            )
        except services.RevisionConflict:
            continue  # another write landed between our read and ours: merge again
    raise ContentConflict(current=space.current_revision, clashes=[])


def page_create(
    *,
    space: Space,
    path: str,
    title: str,
    body: str = "",
    condition: str = "",
    message: str = "",
    author=None,
) -> Revision:
    """Add a page at the end of the navigation (under its parent path, where it has one)."""
    current = page_dicts(space.current_revision_id) if space.current_revision_id else []
    page = {"path": path, "title": title, "body": body, "condition": condition}
    check_page_edit(current, None, page)  # the same checks as an edit's (raises ValidationError)
    try:
        return services.space_content_update(
            space=space,
            pages=[*current, page],
            message=message or _default_message("Add", title),
            author=author,
            based_on=space.current_revision_id,
        )
    except services.RevisionConflict:
        # Someone saved between our read and our write: add the page to what is there now.
        space.refresh_from_db(fields=["current_revision"])
        return page_create(
            space=space,
            path=path,
            title=title,
            body=body,
            condition=condition,
            message=message,
            author=author,
        )


def page_delete(*, space: Space, path: str, author=None, based_on: str) -> Revision:
    base = _base_pages(space, based_on)
    if path not in base:
        raise ValidationError({"path": ["no page has this path in that revision"]})
    return _write_on_top(
        space,
        based_on=based_on,
        touched=path,
        change=lambda pages: [page for page in pages if page["path"] != path],
        message=_default_message("Delete", base[path]["title"]),
        author=author,
        base_page=base[path],
        empty_error="a space keeps at least one page: add another before deleting this one",
    )


def page_move(*, space: Space, path: str, direction: str, author=None) -> Revision | None:
    """Move a page (with the pages under it) one place up or down among the pages of its
    parent in the navigation; None when it is already first (up) or last (down)."""
    if direction not in ("up", "down"):
        raise ValidationError({"direction": ["must be up or down"]})
    pages = page_dicts(space.current_revision_id) if space.current_revision_id else []
    paths = {page["path"] for page in pages}
    if path not in paths:
        raise ValidationError({"path": ["no page has this path"]})
    children: dict[str | None, list[dict]] = defaultdict(list)
    for page in pages:
        children[nearest_parent(page["path"], paths)].append(page)
    siblings = children[nearest_parent(path, paths)]
    at = next(index for index, page in enumerate(siblings) if page["path"] == path)
    other = at - 1 if direction == "up" else at + 1
    if not 0 <= other < len(siblings):
        return None
    siblings[at], siblings[other] = siblings[other], siblings[at]
    ordered: list[dict] = []

    def walk(parent: str | None) -> None:
        for page in children[parent]:
            ordered.append(page)
            walk(page["path"])

    walk(None)
    return services.space_content_update(
        space=space,
        pages=ordered,
        message=_default_message("Reorder", siblings[other]["title"]),
        author=author,
        based_on=space.current_revision_id,
    )


def revision_restore(*, space: Space, revision: Revision, author=None) -> Revision:
    """A new revision holding ``revision``'s pages as they were (nothing is rewritten: the
    revisions in between stay in the history)."""
    if revision.space_id != space.pk:
        raise ValidationError({"revision": ["is not a revision of this space"]})
    return services.space_content_update(
        space=space,
        pages=page_dicts(revision.pk),
        message=f"Restore revision {revision.pk[:8]}",
        author=author,
    )


def page_restore(*, space: Space, path: str, revision: Revision, author=None) -> Revision:
    """One page as it was in ``revision``, restored alone as a new revision: the other pages
    stay as they are now. A page deleted since comes back where it stood (after the page
    that preceded it then, when that one is still there; else first among the pages).
    ValidationError naming ``revision`` (not this space's) or ``path`` (no such page then,
    or the same now: nothing to restore)."""
    if revision.space_id != space.pk:
        raise ValidationError({"revision": ["is not a revision of this space"]})
    then = page_dicts(revision.pk)
    wanted = next((page for page in then if page["path"] == path), None)
    if wanted is None:
        raise ValidationError({"path": ["no page has this path in that revision"]})
    space.refresh_from_db(fields=["current_revision"])
    current = page_dicts(space.current_revision_id) if space.current_revision_id else []
    at = next((index for index, page in enumerate(current) if page["path"] == path), None)
    if at is not None and current[at] == wanted:
        raise ValidationError({"path": ["the page is the same now as in that revision"]})
    if at is not None:
        pages = [*current[:at], wanted, *current[at + 1 :]]
    else:
        pages = placed_after(current, then, wanted)
    try:
        return services.space_content_update(
            space=space,
            pages=pages,
            message=f"Restore {wanted['title']} as in revision {revision.pk[:8]}",
            author=author,
            based_on=space.current_revision_id,
        )
    except services.RevisionConflict:  # someone saved meanwhile: restore onto theirs
        return page_restore(space=space, path=path, revision=revision, author=author)


#: An editor polls every 10 s; a person not heard from for this long has left the page.
PRESENCE_SECONDS = 30


def page_presence_mark(*, space: Space, path: str, user) -> list[str]:
    """``user`` has the page open in the editor now: the others who have it open (heard from
    within PRESENCE_SECONDS), by name. Rows of people long gone are dropped on the way."""
    now = timezone.now()
    PagePresence.objects.update_or_create(
        space=space, path=path, user=user, defaults={"seen_at": now}
    )
    PagePresence.objects.filter(
        space=space, path=path, seen_at__lt=now - timedelta(hours=1)
    ).delete()
    others = PagePresence.objects.filter(
        space=space, path=path, seen_at__gte=now - timedelta(seconds=PRESENCE_SECONDS)
    ).exclude(user=user)
    return sorted(others.values_list("user__username", flat=True))


def space_view_from_reader(*, space: Space, visitor: Visitor, who: str) -> bool:
    """The visitor opened the space's reader: fire ``space_view``, at most once per visitor
    (``who``: ``reader_identity``), space and READER_VIEW_INTERVAL (across every process:
    the row's time is the lock). Whether it fired."""
    now = timezone.now()
    with transaction.atomic():
        renewed = SpaceVisit.objects.filter(
            space=space, visitor=who, last_fired_at__lte=now - READER_VIEW_INTERVAL
        ).update(last_fired_at=now)
        if not renewed:
            try:
                with transaction.atomic():
                    SpaceVisit.objects.create(space=space, visitor=who, last_fired_at=now)
            except IntegrityError:
                return False  # seen within the interval (or by a concurrent read)
        services.space_view_record(space=space, visitor=visitor)
    return True


def space_visits_purge() -> int:
    """Forget the visits older than READER_VIEW_INTERVAL: their next read fires again
    anyway, so their rows only grow the table (one per visitor and space)."""
    deleted, _ = SpaceVisit.objects.filter(
        last_fired_at__lt=timezone.now() - READER_VIEW_INTERVAL
    ).delete()
    return deleted


def reader_identity(visitor: Visitor, *, known_cookie: bool) -> str:
    """Who a reader is for the view limit: the member; else the anonymous id of a browser that
    sent its cookie back; else (a first visit, or a client that keeps no cookie, which would
    otherwise get a new id, and fire again, on every request) its address and user agent."""
    if visitor.user_id:
        return f"user:{visitor.user_id}"
    if known_cookie:
        return f"anon:{visitor.anonymous_id}"
    digest = hashlib.sha256(f"{visitor.ip}\n{visitor.user_agent}".encode()).hexdigest()
    return f"addr:{digest[:40]}"


# --- Helpers ---------------------------------------------------------------------------------


def _base_pages(space: Space, based_on: str) -> dict[str, dict]:
    if not Revision.objects.filter(pk=based_on, space=space).exists():
        raise ValidationError({"based_on": ["is not a revision of this space"]})
    return {page["path"]: page for page in page_dicts(based_on)}


def _write_on_top(
    space,
    *,
    based_on,
    touched,
    change,
    message,
    author,
    base_page,
    empty_error=None,
    merged_with=None,
) -> Revision:
    """Apply ``change`` (pages -> pages) to the space's current pages when ``touched`` is as
    it was in ``based_on``; when someone changed it meanwhile, ``merged_with(theirs)`` gives
    the change on top of theirs (or raises PageConflict); without it, PageConflict."""
    for _attempt in range(3):
        space.refresh_from_db(fields=["current_revision"])
        current_id = space.current_revision_id
        pages = page_dicts(current_id) if current_id else []
        apply = change
        if current_id != based_on:
            theirs = next((page for page in pages if page["path"] == touched), None)
            if theirs is None or _content(theirs) != _content(base_page):
                if merged_with is None:
                    raise PageConflict(
                        current=space.current_revision, theirs=theirs, base=base_page
                    )
                apply = merged_with(theirs)
        changed = apply(pages)
        if not changed and empty_error:
            raise ValidationError({"path": [empty_error]})
        try:
            return services.space_content_update(
                space=space, pages=changed, message=message, author=author, based_on=current_id
            )
        except services.RevisionConflict:
            continue  # another save landed between our read and our write: look again
    raise PageConflict(current=space.current_revision, theirs=None)


def check_page_edit(pages: list[dict], path: str | None, edited: dict) -> list[dict]:
    """``pages`` with the page at ``path`` (None: a new page) replaced by ``edited``, which may
    move it; ValidationError naming the fields (``title``, ``path``, ``body``) when it cannot
    be."""
    errors = {}
    try:
        _check_page(edited)
    except ValidationError as error:
        errors = error.message_dict
    if edited["path"] != path and any(page["path"] == edited["path"] for page in pages):
        errors.setdefault("path", []).append(f"another page has the path {edited['path']!r}")
    if errors:
        raise ValidationError(errors)
    if path is None:
        return [*pages, edited]
    return [edited if page["path"] == path else page for page in pages]


def _check_page(page: dict) -> None:
    """One page's fields, with the errors named as the editor's fields are."""
    try:
        content.check_pages([page])
    except ValidationError as error:
        raise ValidationError(
            {key.removeprefix("pages.0."): value for key, value in error.message_dict.items()}
        ) from None


def _content(page: dict) -> tuple[str, str, str]:
    return page["title"], page["body"], page.get("condition") or ""


def _default_message(verb: str, title: str) -> str:
    return f"{verb} {title.strip()[:200]}"
