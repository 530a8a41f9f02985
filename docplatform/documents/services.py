"""Writes of the documentation product. Each page action makes a new revision through
``revisions`` (the one module the REST API, change requests and Git sync write through too),
so ``space_content_updated`` fires the same whichever door was used; nothing here writes pages
itself. A page action writes that page alone, however many pages the space holds.

Nothing is lost: every edit names the revision it was made from (``based_on``). When the
space moved on meanwhile, an edit of a page that nobody else touched is applied on top of
the new revision; an edit of a page that changed meanwhile is merged with that change, line
by line against the page as it was (``merging``): changes that do not overlap are both kept
with no question; overlapping ones raise PageConflict carrying the hunks, so the person
resolves each (theirs, mine, both, or an edit) and nothing is written until they do.
"""

from contextlib import contextmanager
from datetime import timedelta

from django.core.exceptions import ValidationError
from django.utils import timezone

from .. import content, revisions
from ..merging import merge_page, merge_pages
from ..models import Revision, Space
from ..page_versions import page_as_dict, page_at, page_dicts, pages_at
from ..positions import key_between
from ..reading.navigation import navigation, nearest_parent
from .models import PagePresence


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
    keeps the page's), edited from the revision ``based_on``: a revision that writes this page
    alone. Raises ValidationError naming the field (``title``, ``path``, ``condition``,
    ``body``), or PageConflict."""
    new_path = path if new_path is None else new_path
    mine = _base_page(space, based_on, path)
    edited = {"path": new_path, "title": title, "body": body}
    edited["condition"] = mine.get("condition", "") if condition is None else condition
    _check_edit(space, path, edited)
    return _write_on_top(
        space,
        based_on=based_on,
        path=path,
        base_page=mine,
        edited=edited,
        message=message or _default_message("Edit", title),
        author=author,
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
        return revisions.space_content_update(
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
            return revisions.space_content_update(
                space=space, pages=written, message=message, author=author, based_on=current
            )
        except revisions.RevisionConflict:
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
    """Add a page at the end of the navigation (under its parent path, where it has one): a
    revision that writes this page alone."""
    page = {"path": path, "title": title, "body": body, "condition": condition}
    _check_edit(space, None, page)  # the same checks as an edit's (raises ValidationError)
    with _named_as_editor():
        return revisions.space_pages_commit(
            space=space,
            writes=[revisions.PageWrite(page)],
            message=message or _default_message("Add", title),
            author=author,
        )


def page_delete(*, space: Space, path: str, author=None, based_on: str) -> Revision:
    base = _base_page(space, based_on, path)
    return _write_on_top(
        space,
        based_on=based_on,
        path=path,
        base_page=base,
        edited=None,
        message=_default_message("Delete", base["title"]),
        author=author,
    )


def page_move(*, space: Space, path: str, direction: str, author=None) -> Revision | None:
    """Move a page (with the pages under it) one place up or down among the pages of its
    parent in the navigation; None when it is already first (up) or last (down). The page
    gets a position between its new neighbours': a revision that writes it alone."""
    if direction not in ("up", "down"):
        raise ValidationError({"direction": ["must be up or down"]})
    for _attempt in range(3):
        space.refresh_from_db(fields=["current_revision"])
        current_id = space.current_revision_id
        siblings = _siblings(current_id, path)
        at = siblings.index(path)
        other = at - 1 if direction == "up" else at + 1
        if not 0 <= other < len(siblings):
            return None
        low, high = (other - 1, other) if direction == "up" else (other, other + 1)
        neighbours = [siblings[i] if 0 <= i < len(siblings) else None for i in (low, high)]
        keys = dict(
            pages_at(current_id)
            .filter(path__in=[p for p in neighbours if p])
            .values_list("path", "position")
        )
        page = page_at(current_id, path)
        try:
            return revisions.space_pages_commit(
                space=space,
                writes=[
                    revisions.PageWrite(
                        page_as_dict(page),
                        replaces=path,
                        position=key_between(*(keys.get(p) for p in neighbours)),
                    )
                ],
                message=_default_message("Reorder", page_at(current_id, siblings[other]).title),
                author=author,
                based_on=current_id,
            )
        except revisions.RevisionConflict:
            continue  # another save landed meanwhile: look at the order again
    raise PageConflict(current=space.current_revision, theirs=None)


def _siblings(revision_id: str | None, path: str) -> list[str]:
    """The paths of the pages beside ``path`` in the navigation (its own included), in order;
    ValidationError naming ``path`` when no page has it."""
    roots, ordered = navigation(revision_id)
    if not any(item.path == path for item in ordered):
        raise ValidationError({"path": ["no page has this path"]})
    parent = nearest_parent(path, {item.path for item in ordered})
    level = roots if parent is None else next(i for i in ordered if i.path == parent).children
    return [item.path for item in level]


def revision_restore(*, space: Space, revision: Revision, author=None) -> Revision:
    """A new revision holding ``revision``'s pages as they were (nothing is rewritten: the
    revisions in between stay in the history)."""
    if revision.space_id != space.pk:
        raise ValidationError({"revision": ["is not a revision of this space"]})
    return revisions.space_content_update(
        space=space,
        pages=page_dicts(revision),
        message=f"Restore revision {revision.pk[:8]}",
        author=author,
    )


def page_restore(*, space: Space, path: str, revision: Revision, author=None) -> Revision:
    """One page as it was in ``revision``, restored alone as a new revision: the other pages
    stay as they are now. A page deleted since comes back where it stood (its position then,
    among the pages still there). ValidationError naming ``revision`` (not this space's) or
    ``path`` (no such page then, or the same now: nothing to restore)."""
    if revision.space_id != space.pk:
        raise ValidationError({"revision": ["is not a revision of this space"]})
    then = page_at(revision, path)
    if then is None:
        raise ValidationError({"path": ["no page has this path in that revision"]})
    wanted = page_as_dict(then)
    for _attempt in range(3):
        space.refresh_from_db(fields=["current_revision"])
        current_id = space.current_revision_id
        now = page_at(current_id, path)
        if now is not None and page_as_dict(now) == wanted:
            raise ValidationError({"path": ["the page is the same now as in that revision"]})
        write = revisions.PageWrite(wanted, replaces=path if now else None)
        if now is None:
            write.position = _free_position(current_id, then.position)
        try:
            return revisions.space_pages_commit(
                space=space,
                writes=[write],
                message=f"Restore {wanted['title']} as in revision {revision.pk[:8]}",
                author=author,
                based_on=current_id,
            )
        except revisions.RevisionConflict:
            continue  # someone saved meanwhile: restore onto theirs
    raise PageConflict(current=space.current_revision, theirs=None)


def _free_position(revision_id: str | None, wanted: str) -> str:
    """``wanted``, or the nearest key after it no page of the revision has."""
    pages = pages_at(revision_id)
    if not pages.filter(position=wanted).exists():
        return wanted
    following = (
        pages.filter(position__gt=wanted).order_by("position").values_list("position", flat=True)
    )
    return key_between(wanted, following.first())


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


# --- Helpers ---------------------------------------------------------------------------------


def _base_page(space: Space, based_on: str, path: str) -> dict:
    """The page at ``path`` as the revision ``based_on`` (of this space) holds it."""
    revision = Revision.objects.filter(pk=based_on, space=space).first()
    if revision is None:
        raise ValidationError({"based_on": ["is not a revision of this space"]})
    page = page_at(revision, path)
    if page is None:
        raise ValidationError({"path": ["no page has this path in that revision"]})
    return page_as_dict(page)


def _write_on_top(space, *, based_on, path, base_page, edited, message, author) -> Revision:
    """Write ``edited`` (None: remove the page) in place of the page at ``path`` of the
    space's current revision, when that page is as it was in ``based_on``; when someone
    changed it meanwhile, the edit merged with theirs (``merging.merge_page``), or
    PageConflict when they overlap (or when it was removed, or for a removal of a page
    changed since)."""
    for _attempt in range(3):
        space.refresh_from_db(fields=["current_revision"])
        current_id = space.current_revision_id
        written = edited
        if current_id != based_on:
            now = page_at(current_id, path)
            theirs = page_as_dict(now) if now is not None else None
            if theirs is None or _content(theirs) != _content(base_page):
                if theirs is None or edited is None:
                    raise PageConflict(
                        current=space.current_revision, theirs=theirs, base=base_page
                    )
                written, clash = merge_page(base_page, theirs, edited)
                if clash is not None:
                    raise PageConflict(
                        current=space.current_revision, theirs=theirs, clash=clash, base=base_page
                    )
        try:
            with _named_as_editor(removing=written is None):
                return revisions.space_pages_commit(
                    space=space,
                    writes=[revisions.PageWrite(written, replaces=path)] if written else [],
                    removed=[] if written else [path],
                    message=message,
                    author=author,
                    based_on=current_id,
                )
        except revisions.RevisionConflict:
            continue  # another save landed between our read and our write: look again
    raise PageConflict(current=space.current_revision, theirs=None)


@contextmanager
def _named_as_editor(*, removing: bool = False):
    """A one-page write's errors named as the editor's fields are (``pages.0.path`` is
    ``path``; a space left with no page, ``path`` too, when removing)."""
    try:
        yield
    except ValidationError as error:
        named = {}
        for key, problems in error.message_dict.items():
            if key == "pages" and removing:
                problems = ["a space keeps at least one page: add another before deleting this one"]
            named.setdefault("path" if key == "pages" else key.removeprefix("pages.0."), []).extend(
                problems
            )
        raise ValidationError(named) from None


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


def _check_edit(space: Space, path: str | None, edited: dict) -> None:
    """``edited``'s fields, and its path free when it moves there (or is new), at once: a
    ValidationError names each field that is wrong (the write checks the path again, under
    the space's lock)."""
    errors = {}
    try:
        _check_page(edited)
    except ValidationError as error:
        errors = error.message_dict
    moved = edited["path"] != path and "path" not in errors
    if moved and page_at(space.current_revision_id, edited["path"]) is not None:
        errors["path"] = [f"another page has the path {edited['path']!r}"]
    if errors:
        raise ValidationError(errors)


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
