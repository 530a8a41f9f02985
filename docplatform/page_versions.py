"""Reads of a space's pages: the one way every reader (the reader and the editor, the history
and its diffs, restores, the sites, Git sync, the REST API, search) finds the pages a revision
holds among the page versions (``models.Page``: valid from one revision number to another),
and what a revision changed (the versions it started and ended), whatever the size of the
space."""

from dataclasses import dataclass
from functools import lru_cache

from django.db.models import Q, QuerySet

from .models import CURRENT, Page, Revision

#: A revision's pages in reading order before the navigation nests them.
ORDER = ("position", "path")


class _Unknown(LookupError):
    pass


@lru_cache(maxsize=8192)
def _known_place(revision_id: str) -> tuple[str, int]:
    """(its space, its number): what never changes about a revision, kept once found (an id
    not found is not kept: it may be a revision another transaction has not committed yet)."""
    place = Revision.objects.filter(pk=revision_id).values_list("space_id", "number").first()
    if place is None:
        raise _Unknown(revision_id)
    return place


def _place(revision_id: str) -> tuple[str, int] | None:
    try:
        return _known_place(revision_id)
    except _Unknown:
        return None


def pages_at(revision: "Revision | str | None") -> QuerySet:
    """The page versions ``revision`` (a Revision or its id) holds; none for None."""
    if revision is None:
        return Page.objects.none()
    if isinstance(revision, Revision):
        space_id, number = revision.space_id, revision.number
    else:
        place = _place(revision)
        if place is None:
            return Page.objects.none()
        space_id, number = place
    return _versions().filter(space_id=space_id, valid_from__lte=number, valid_to__gt=number)


def current_pages(space_ids) -> QuerySet:
    """The page versions the current revisions of the spaces ``space_ids`` hold."""
    return _versions().filter(space_id__in=space_ids, valid_to=CURRENT)


def _versions() -> QuerySet:
    """Page versions without their search vectors, which only search reads (in the
    database): as large as their text, never needed by a reader."""
    return Page.objects.defer("search_vector")


def page_at(revision: "Revision | str | None", path: str) -> Page | None:
    return pages_at(revision).filter(path=path).first()


def page_dicts(revision: "Revision | str | None") -> list[dict]:
    """A revision's pages as {path, title, body}, in navigation order, each with its
    ``condition`` when it has one."""
    rows = pages_at(revision).order_by(*ORDER).values("path", "title", "body", "condition")
    return [_without_empty_condition(row) for row in rows]


def page_as_dict(page: Page) -> dict:
    return _without_empty_condition(
        {"path": page.path, "title": page.title, "body": page.body, "condition": page.condition}
    )


def _without_empty_condition(page: dict) -> dict:
    if not page["condition"]:
        del page["condition"]
    return page


@dataclass
class RevisionChange:
    """What one revision did to its space's pages: the versions it started (``written``) and
    the versions it ended (``ended``: the pages as they were before, changed or removed)."""

    written: dict[str, dict]
    ended: dict[str, dict]


def revision_changes(revisions: list[Revision]) -> dict[str, RevisionChange]:
    """For each of ``revisions`` (of one space), the versions it started and ended, by path:
    read from those versions alone, however many pages the space holds."""
    if not revisions:
        return {}
    numbers = {revision.number: revision.pk for revision in revisions}
    fields = ["path", "title", "body", "condition", "position", "valid_from", "valid_to"]
    rows = (
        Page.objects.filter(space_id=revisions[0].space_id)
        .filter(Q(valid_from__in=numbers) | Q(valid_to__in=numbers))
        .values(*fields)
    )
    changes = {revision.pk: RevisionChange({}, {}) for revision in revisions}
    for row in rows:
        started, ended = row.pop("valid_from"), row.pop("valid_to")
        if started in numbers:
            changes[numbers[started]].written[row["path"]] = row
        if ended in numbers:
            changes[numbers[ended]].ended[row["path"]] = row
    return changes
