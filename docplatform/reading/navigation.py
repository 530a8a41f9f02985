"""A revision's navigation and its pages as a reader or a visitor reads them: the tree of
pages, the reading order, the previous and next pages, the branch shown open, the page at a
path. What the reader, the published sites and the REST API show is read here (one home)."""

import hashlib
import threading
from collections import OrderedDict
from dataclasses import dataclass, field

from django.core.cache import cache

from ..markdown import RENDERER_VERSION
from ..models import Page, Space
from ..page_versions import ORDER, page_at, pages_at
from .adaptive import page_shown


@dataclass
class NavItem:
    """A page in the navigation, with the pages under it."""

    path: str
    title: str
    children: list["NavItem"] = field(default_factory=list)
    depth: int = 0
    condition: str = ""  # adaptive content: "" shows it to every visitor


@dataclass
class _Kept:
    roots: list[NavItem]
    ordered: list[NavItem]
    positions: dict[str, int] = field(default_factory=dict)  # path -> place, when asked


#: The navigations of the revisions read lately, kept by each process: a revision never
#: changes, so what is kept is never stale, and a read at 10,000 pages neither unpickles the
#: whole tree from the shared cache nor searches it.
_recent: OrderedDict[str, _Kept] = OrderedDict()
_RECENT_REVISIONS = 32


_recent_lock = threading.Lock()  # a web process's threads share it


def _kept(revision_id: str) -> _Kept:
    with _recent_lock:
        kept = _recent.get(revision_id)
        if kept is not None:
            _recent.move_to_end(revision_id)
            return kept
    key = f"navigation:3:{revision_id}"
    tree = cache.get(key)
    if tree is None:
        tree = _navigation(revision_id)
        cache.set(key, tree, 24 * 3600)
    kept = _Kept(*tree)
    with _recent_lock:
        _recent[revision_id] = kept
        while len(_recent) > _RECENT_REVISIONS:
            _recent.popitem(last=False)
    return kept


def navigation(revision_id: str | None) -> tuple[list[NavItem], list[NavItem]]:
    """(the tree of pages by path, every page in reading order). A page sits under the
    nearest page whose path is a prefix of its own (``guide/install`` under ``guide``),
    siblings in their navigation order. Kept per revision (a revision never changes): in this
    process for the revisions read lately, and in the shared cache."""
    if revision_id is None:
        return [], []
    kept = _kept(revision_id)
    return kept.roots, kept.ordered


def _places(revision_id: str, ordered: list[NavItem]) -> dict[str, int]:
    """Each page's place in ``ordered``: kept with the revision's navigation when ``ordered``
    is its whole reading order (a 10,000-page space is not searched at every read)."""
    kept = _recent.get(revision_id)
    if kept is None or kept.ordered is not ordered:
        return {item.path: at for at, item in enumerate(ordered)}
    if not kept.positions:
        kept.positions = {item.path: at for at, item in enumerate(ordered)}
    return kept.positions


def neighbours(
    revision_id: str, ordered: list[NavItem], path: str
) -> tuple[NavItem | None, NavItem | None]:
    """The pages before and after ``path`` in ``ordered`` (the revision's reading order, or
    the part of it a visitor is shown)."""
    at = _places(revision_id, ordered).get(path)
    if at is None:  # not shown to this reader: no neighbours to offer
        return None, None
    return (ordered[at - 1] if at > 0 else None), (
        ordered[at + 1] if at + 1 < len(ordered) else None
    )


def open_branch(revision_id: str, ordered: list[NavItem], path: str | None) -> list[str]:
    """The pages whose children a navigation opened at ``path`` shows: the pages above it,
    from the top, and itself when pages sit under it."""
    if path is None:
        return []
    places = _places(revision_id, ordered)
    if path not in places:
        return []
    branch = [path] if ordered[places[path]].children else []
    parent = nearest_parent(path, places)
    while parent is not None:
        branch.append(parent)
        parent = nearest_parent(parent, places)
    return branch[::-1]


def navigation_for(revision_id: str | None, claims: dict | None):
    """``navigation`` as a visitor with ``claims`` sees it: without the pages whose condition
    does not hold for them (the pages under such a page take its place); None: everything,
    as the organization's people see it."""
    roots, ordered = navigation(revision_id)
    if claims is None or not any(item.condition for item in ordered):
        return roots, ordered
    shown: list[NavItem] = []

    def kept(level: list[NavItem], depth: int) -> list[NavItem]:
        items = []
        for item in level:
            if not page_shown(item.condition, claims):
                items += kept(item.children, depth)
                continue
            copy = NavItem(item.path, item.title, depth=depth, condition=item.condition)
            shown.append(copy)
            copy.children = kept(item.children, depth + 1)
            items.append(copy)
        return items

    return kept(roots, 0), shown


def first_page(space: Space | None) -> Page | None:
    """The first page of the space's current revision in reading order (None: no pages)."""
    if space is None:
        return None
    _, ordered = navigation(space.current_revision_id)
    if not ordered:
        return None
    return page_at(space.current_revision_id, ordered[0].path)


def _navigation(revision_id: str) -> tuple[list[NavItem], list[NavItem]]:
    rows = pages_at(revision_id).order_by(*ORDER)
    items = {
        path: NavItem(path, title, condition=condition)
        for path, title, condition in rows.values_list("path", "title", "condition")
    }
    roots: list[NavItem] = []
    for path, item in items.items():
        parent = nearest_parent(path, items)
        (items[parent].children if parent else roots).append(item)
    ordered: list[NavItem] = []

    def walk(level: list[NavItem], depth: int) -> None:
        for item in level:
            item.depth = depth
            ordered.append(item)
            walk(item.children, depth + 1)

    walk(roots, 0)
    return roots, ordered


def nearest_parent(path: str, items) -> str | None:
    """The path of the page ``path`` sits under in the navigation (``items`` holds every
    page's path), or None for a page at the top."""
    parts = path.split("/")
    for length in range(len(parts) - 1, 0, -1):
        candidate = "/".join(parts[:length])
        if candidate in items:
            return candidate
    return None


def page_in(revision_id: str | None, path: str | None, claims: dict | None = None) -> Page | None:
    """The page at ``path`` of the revision (the first in reading order when ``path`` is
    None), or None. With ``claims`` (a visitor's), a page whose condition does not hold for
    them is None too, as a missing one. Cached once rendered: a revision's pages never
    change."""
    if revision_id is None:
        return None
    if path is None:
        _, ordered = navigation_for(revision_id, claims)
        if not ordered:
            return None
        path = ordered[0].path
    # a path may be 300 characters: its digest keeps the key within any backend's limit
    key = f"page:3:{revision_id}:{hashlib.sha256(path.encode()).hexdigest()[:32]}"
    page = cache.get(key)
    if page is None:
        page = page_at(revision_id, path)
        if page is not None and page.rendered_with == RENDERER_VERSION:
            cache.set(key, page, 3600)
    if page is not None and claims is not None and not page_shown(page.condition, claims):
        return None
    return page
