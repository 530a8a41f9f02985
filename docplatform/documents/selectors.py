"""Reads of the documentation product: a space as its reader may read it, its history and
what each revision changed (a revision's navigation and pages: ``reading.navigation``)."""

import difflib
from dataclasses import dataclass, field

from django.db.models import QuerySet
from django.http import Http404

from ..models import Revision, Space
from ..page_versions import revision_changes

HISTORY_PAGE_SIZE = 30


@dataclass(frozen=True)
class PageChange:
    path: str
    title: str
    kind: str  # added, removed, changed, moved
    lines: list[tuple[str, str]] = field(default_factory=list)  # (" "|"+"|"-"|"@", text)


@dataclass(frozen=True)
class HistoryEntry:
    revision: Revision
    changes: list[PageChange]
    is_current: bool


def history(space: Space, *, before: str | None = None) -> tuple[list[HistoryEntry], str | None]:
    """A page of the space's revisions, newest first, each with the pages it changed against
    its parent; and the id to pass as ``before`` for the next (older) page, or None."""
    revisions = _revisions(space)
    if before:
        anchor = revisions.filter(pk=before).first()
        if anchor is not None:
            revisions = revisions.filter(created_at__lte=anchor.created_at).exclude(pk=anchor.pk)
    listed = list(revisions[: HISTORY_PAGE_SIZE + 1])
    more = listed[HISTORY_PAGE_SIZE].pk if len(listed) > HISTORY_PAGE_SIZE else None
    listed = listed[:HISTORY_PAGE_SIZE]
    changes = revision_changes(listed)
    entries = [
        HistoryEntry(
            revision,
            _changes(changes[revision.pk].ended, changes[revision.pk].written, lines=False),
            revision.pk == space.current_revision_id,
        )
        for revision in listed
    ]
    return entries, (listed[-1].pk if more else None)


def _revisions(space: Space) -> QuerySet:
    return space.revisions.select_related("author").order_by("-created_at", "-pk")


def revision_of(space: Space, revision_id: str) -> Revision:
    revision = _revisions(space).filter(pk=revision_id).first()
    if revision is None:
        raise Http404("No such revision.")
    return revision


def revision_diff(revision: Revision) -> list[PageChange]:
    """What ``revision`` changed against its parent, with a line diff of each changed page:
    read from the page versions it ended and started alone."""
    change = revision_changes([revision])[revision.pk]
    return _changes(change.ended, change.written, lines=True)


def pages_changes(before: list[dict], after: list[dict]) -> list[PageChange]:
    """What ``after`` changes against ``before`` (two lists of pages), with line diffs: a
    change request's pages against the space's."""
    by_path = lambda pages: {page["path"]: page for page in pages}  # noqa: E731
    return _changes(by_path(before), by_path(after), lines=True)


def _changes(before: dict, after: dict, *, lines: bool) -> list[PageChange]:
    changes = []
    for path in sorted(set(before) | set(after)):
        old, new = before.get(path), after.get(path)
        if old is not None and new is not None and _same(old, new):
            continue
        kind = "added" if old is None else "removed" if new is None else "changed"
        title = (new or old)["title"]
        diff = line_diff(old, new) if lines else []
        changes.append(PageChange(path, title, kind, diff))
    return changes


def _same(old: dict, new: dict) -> bool:
    return _heading_lines(old) == _heading_lines(new) and (
        old["body"].splitlines() == new["body"].splitlines()
    )


def line_diff(old: dict | None, new: dict | None) -> list[tuple[str, str]]:
    """A line diff of the page: its title (``# Title``) and its condition first, as lines of
    their own where they differ, then the unified diff of its body with 3 lines of context,
    whose ``@`` lines (where a hunk starts) count the body's own lines."""
    diff = []
    for before, after in zip(_heading_lines(old), _heading_lines(new), strict=True):
        if before != after:
            diff += [("-", before)] if before is not None else []
            diff += [("+", after)] if after is not None else []
    body = lambda page: page["body"].splitlines() if page is not None else []  # noqa: E731
    for line in difflib.unified_diff(body(old), body(new), lineterm="", n=3):
        if line.startswith(("---", "+++")):
            continue
        if line.startswith("@@"):
            diff.append(("@", line))
        else:
            diff.append((line[:1] or " ", line[1:]))
    return diff


def _heading_lines(page: dict | None) -> tuple[str | None, str | None]:
    """The page's title and condition as the diff shows them (None: it has none)."""
    if page is None:
        return None, None
    condition = page.get("condition") or ""
    return f"# {page['title']}", f"condition: {condition}" if condition else None
