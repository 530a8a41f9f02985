"""Writes of a space's content: every new revision, from every door (the editor, the REST API,
change requests, Git sync, restores, the admin), is made here, and fires
``space_content_updated`` in the same transaction.

A revision writes only what it changes: ``space_pages_commit`` ends the versions of the pages
it changes or removes and starts a version of each page it writes (``models.Page``), whatever
the size of the space; ``space_content_update``, given a whole set of pages, works out which
those are (and where each page now stands: ``positions.keys_for``) and commits them. The
versions are written with what search finds of them (``search_index.versions_insert``)."""

from dataclasses import dataclass

from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import transaction

from . import events
from .audit.services import audit_record
from .content import MAX_MESSAGE_LENGTH, check_pages, condition_of, page_limit_error, rendered
from .hooks import revision_written, space_content_changed
from .markdown import RENDERER_VERSION
from .models import CURRENT, Page, Revision, Space
from .page_versions import ORDER
from .positions import keys_between, keys_for
from .principals import is_machine
from .search_index import versions_insert


class RevisionConflict(Exception):
    """A write based on a revision that is no longer the space's current one."""

    def __init__(self, current: Revision | None):
        super().__init__("the space changed since that revision")
        self.current = current


@dataclass
class PageWrite:
    """A page a revision writes: ``page`` ({path, title, body, condition}, checked by
    ``content.check_pages``) in place of the current page at ``replaces`` (None: a new page),
    at ``position`` (None: where the replaced page stood)."""

    page: dict
    replaces: str | None = None
    position: str | None = None


@transaction.atomic
def space_content_update(
    *,
    space: Space,
    pages: list[dict],
    message: str = "",
    author=None,
    based_on: str | None = None,
    git_commit: str = "",
) -> Revision:
    """Write a new revision holding ``pages`` ({path, title, body, and an optional
    condition}, in navigation order): the pages that differ from the current revision's (or
    stand elsewhere in the order) are written, the ones missing from ``pages`` removed, the
    rest shared with the current revision. See ``space_pages_commit`` for the rest."""
    check_pages(pages)
    locked = _locked(space, based_on)
    current = {
        row["path"]: row
        for row in Page.objects.filter(space=locked, valid_to=CURRENT).values(
            "path", "title", "body", "condition", "position"
        )
    }
    order = [page["path"] for page in pages]
    keys = keys_for(order, {path: current[path]["position"] for path in order if path in current})
    writes = []
    for page in pages:
        now = current.get(page["path"])
        if now is None or not _same(now, page) or now["position"] != keys[page["path"]]:
            writes.append(
                PageWrite(page, replaces=page["path"] if now else None, position=keys[page["path"]])
            )
    wanted = set(order)
    return _commit(
        space,
        locked,
        writes=writes,
        removed=[path for path in current if path not in wanted],
        message=message,
        author=author,
        git_commit=git_commit,
    )


@transaction.atomic
def space_pages_commit(
    *,
    space: Space,
    writes: list[PageWrite] = (),
    removed: list[str] = (),
    message: str = "",
    author=None,
    based_on: str | None = None,
    git_commit: str = "",
) -> Revision:
    """Write a new revision that changes only ``writes`` and removes the pages at ``removed``
    (paths of the current revision): one row per page written or removed, and the revision's.
    Fires ``space_content_updated``. ``author``: the person who wrote it, or the machine
    principal of an installation's token (then the revision records that installation, and
    the organization's audit log a ``revision.written`` row). With ``based_on`` (a revision
    id), refuses with RevisionConflict when the space's current revision is another one by
    then: the write was made from content that changed meanwhile, and would overwrite it.
    ``git_commit``: the Git commit the pages were imported from (``gitsync``); any other
    revision goes to the revision hooks (``hooks.revision_written``: Git sync writes it to the
    space's branch when its connection says "sync every new revision"). ValidationError names
    the field: ``pages.N.*`` for the N-th of ``writes``, ``path`` for a page that is not
    there, ``pages`` when the space would hold too many or no pages."""
    check_pages([write.page for write in writes], allow_empty=True)
    return _commit(
        space,
        _locked(space, based_on),
        writes=list(writes),
        removed=list(removed),
        message=message,
        author=author,
        git_commit=git_commit,
    )


def _locked(space: Space, based_on: str | None) -> Space:
    """The space's row, locked: two writes to one space are made one after the other. Its
    current revision is read after the lock is held (joined to the locking query, a waiting
    write would see the revision row of its own snapshot: none, or the one replaced)."""
    locked = Space.objects.select_for_update(no_key=True).get(pk=space.pk)
    current = locked.current_revision_id
    locked.current_revision = Revision.objects.get(pk=current) if current else None
    if based_on is not None and current != based_on:
        raise RevisionConflict(locked.current_revision)
    return locked


def _commit(space: Space, locked: Space, *, writes, removed, message, author, git_commit):
    """The revision, on top of ``locked`` (the space's row, locked); ``space`` (the caller's
    copy) is left with it as its current revision."""
    if len(message) > MAX_MESSAGE_LENGTH:
        raise ValidationError({"message": [f"at most {MAX_MESSAGE_LENGTH} characters"]})
    parent = locked.current_revision
    number = parent.number + 1 if parent else 1
    ending = set(removed) | {write.replaces for write in writes if write.replaces is not None}
    ended = {
        page.path: page
        for page in Page.objects.filter(space=locked, valid_to=CURRENT, path__in=ending)
    }
    if missing := sorted(ending - ended.keys()):
        raise ValidationError({"path": [f"no page has the path {missing[0]!r} now"]})
    _check_paths_free(locked, writes, ending)
    page_count = (parent.page_count if parent else 0) - len(ending) + len(writes)
    if page_count > settings.SPACE_MAX_PAGES:
        raise ValidationError({"pages": [page_limit_error()]})
    if page_count == 0:
        raise ValidationError({"pages": ["a space keeps at least one page"]})
    Page.objects.filter(pk__in=[page.pk for page in ended.values()]).update(valid_to=number)
    _place_new_pages(locked, writes)
    by_installation = is_machine(author)
    revision = Revision.objects.create(
        space=locked,
        parent=parent,
        number=number,
        page_count=page_count,
        message=message,
        author=None if by_installation else author,
        author_installation=author.actor_id if by_installation else "",
        author_label=author.actor_label if by_installation else "",
        git_commit=git_commit,
    )
    versions_insert(
        [_version(locked, number, write, ended.get(write.replaces)) for write in writes],
        locked.search_language,
    )
    Space.objects.filter(pk=locked.pk).update(current_revision=revision)
    space.current_revision = locked.current_revision = revision
    space = locked
    events.fire(
        "space_content_updated",
        organization=space.organization,
        space=space,
        spaceId=space.id,
        revisionId=revision.id,
    )
    if by_installation:
        audit_record(
            action="revision.written",
            actor=author,
            target=revision,
            organization=space.organization_id,
            details={"space": space.id, "message": message, "pages": page_count},
            target_label=f"{space.title}, revision {revision.id}",
        )
    if not git_commit:  # an imported revision is on the branch already: never written back
        revision_written(space=space, author=None if by_installation else author)
    space_content_changed(space=space)
    return revision


def _check_paths_free(space: Space, writes: list[PageWrite], ending: set[str]) -> None:
    """No page written takes the path of a page the revision keeps (``check_pages`` saw that
    none of them shares one)."""
    paths = {write.page["path"] for write in writes} - ending
    taken = set(
        Page.objects.filter(space=space, valid_to=CURRENT, path__in=paths).values_list(
            "path", flat=True
        )
    )
    errors = {
        f"pages.{index}.path": [f"another page has the path {write.page['path']!r}"]
        for index, write in enumerate(writes)
        if write.page["path"] in taken
    }
    if errors:
        raise ValidationError(errors)


def _place_new_pages(space: Space, writes: list[PageWrite]) -> None:
    """The new pages written without a position go after the last page, in their order."""
    unplaced = [w for w in writes if w.position is None and w.replaces is None]
    if not unplaced:
        return
    last = (
        Page.objects.filter(space=space, valid_to=CURRENT)
        .order_by(*(f"-{field}" for field in ORDER))
        .values_list("position", flat=True)
        .first()
    )
    placed = [w.position for w in writes if w.position is not None and w.position > (last or "")]
    last = max([last or "", *placed]) or None
    for write, key in zip(unplaced, keys_between(last, None, len(unplaced)), strict=True):
        write.position = key


def _version(space, number, write: PageWrite, replaced: Page | None) -> Page:
    page = write.page
    body = page.get("body", "")
    position = write.position or replaced.position
    same_body = replaced is not None and replaced.body == body
    rendering = (
        {"html": replaced.html, "outline": replaced.outline, "rendered_with": RENDERER_VERSION}
        if same_body and replaced.rendered_with == RENDERER_VERSION
        else rendered(body)
    )
    return Page(
        space=space,
        valid_from=number,
        path=page["path"],
        title=page["title"].strip(),
        body=body,
        condition=condition_of(page),
        position=position,
        **rendering,
    )


def _same(row: dict, page: dict) -> bool:
    return (
        row["title"] == page["title"].strip()
        and row["body"] == page.get("body", "")
        and row["condition"] == condition_of(page)
    )
