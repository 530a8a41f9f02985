"""One way a page is shown, whichever door shows it: the reader (``documents.views``) and a
published site's pages (``sites.views``) both take a ``ShownPage`` from ``shown_page`` and
only add what is their own (the reader's comments and shell cache, the site's feedback form
and page cache). The REST API returns pages as written (their Markdown:
``documents.api.pages``), so it shows none; its ``views/`` endpoint counts a read by the same
rule as the reader (``documents.visits``).

A shown page is the page of the space's revision at a path (the first in reading order
without one) as a viewer with ``claims`` sees it (None: the organization's people, every page
and adaptive section, each marked with its condition; a dict: a visitor, only what holds for
them), its blocks rendered where ``place()`` says, and the frame around it: the navigation's
HTML under ``prefix``, the table of contents, the previous and next pages. Everything is read
when first asked for, so a door that keeps a rendered page (the reader's shells, a site's
page cache) reads nothing it does not show.
"""

from collections.abc import Callable
from dataclasses import dataclass
from functools import cached_property

from django.utils.safestring import SafeString, mark_safe

from ..markdown import RENDERER_VERSION
from ..models import Page, Space
from ..rendering import BlockRef, Document
from . import navigation
from .adaptive import has_adaptive_content
from .blocks import BlockPlace
from .document import as_read, page_document, shown_html, table_of_contents
from .nav_html import nav_html


@dataclass
class ShownPage:
    """A page as one viewer is shown it (``page`` None: a space without pages, the frame
    alone)."""

    space: Space
    revision_id: str | None
    page: Page | None
    claims: dict | None
    prefix: str  # the address the navigation's links are under
    place: Callable[[], BlockPlace]  # where its blocks are shown: asked only when it has any

    @property
    def path(self) -> str | None:
        return self.page.path if self.page else None

    @cached_property
    def written(self) -> Document:
        """The page's document as written, every adaptive section in it."""
        return page_document(self.page)

    @cached_property
    def document(self) -> Document:
        """The document as the viewer sees it (``reading.as_read``)."""
        return as_read(self.written, self.claims)

    @property
    def static(self) -> bool:
        """Whether the page, as stored, has no block: what it shows never changes (a page
        the organization's people read the same at every read; a visitor still sees only the
        sections that hold for them, ``adaptive``)."""
        page = self.page
        return page.rendered_with == RENDERER_VERSION and not page.outline.get("blocks")

    @property
    def adaptive(self) -> bool:
        """Whether what a visitor sees of it depends on their claims."""
        return has_adaptive_content(self.page.condition, self.written)

    @property
    def has_blocks(self) -> bool:
        return bool(self.document.blocks)

    def block(self, key: str) -> BlockRef | None:
        """The block with ``key`` in the page as the viewer sees it, unless it is not valid:
        a press names its block by key, so its integration and props are the page's, never
        the form's."""
        if self.page is None:
            return None
        return next((b for b in self.document.blocks if b.key == key and not b.error), None)

    def content(self) -> SafeString:
        """The page's HTML with its blocks rendered in place."""
        return shown_html(self.document, self.place)

    @cached_property
    def navigation(self) -> tuple[list, list]:
        """(the tree, every page shown to the viewer in reading order)."""
        return navigation.navigation_for(self.revision_id, self.claims)

    def frame(self, content: str | None = None) -> dict:
        """What a page template shows around the content, and the content: ``content`` when
        given (a door's mark, or HTML kept), else the page's (its blocks rendered)."""
        roots, ordered = self.navigation
        context = {
            "roots": roots,
            "nav_tree": nav_html(
                self.revision_id, roots, ordered, prefix=self.prefix, current_path=self.path
            ),
            "current_path": self.path,
            "nav_prefix": self.prefix,
        }
        if self.page is None:
            return context
        previous, following = navigation.neighbours(self.revision_id, ordered, self.page.path)
        return context | {
            "page_obj": self.page,
            # A mark, or the page's HTML (sanitized when it was written).
            "content": mark_safe(content) if content is not None else self.content(),  # noqa: S308
            "toc": table_of_contents(self.document),
            "previous": previous,
            "next": following,
        }


def shown_page(
    space: Space,
    path: str | None,
    *,
    claims: dict | None,
    place: Callable[[str], BlockPlace],
    prefix: str = "",
    revision_id: str | None = None,
) -> ShownPage | None:
    """The page at ``path`` of the space's revision (its current one unless ``revision_id``;
    the first page shown to the viewer without ``path``) as a viewer with ``claims`` sees it;
    None when ``path`` names no page, or one whose condition hides it from them (the same
    answer: a 404). ``place(path)`` says where the page's blocks are shown; ``prefix``, the
    address its navigation's links are under (a door that shows no frame gives none)."""
    revision_id = revision_id if revision_id is not None else space.current_revision_id
    page = navigation.page_in(revision_id, path, claims)
    if page is None and path is not None:
        return None
    return ShownPage(
        space=space,
        revision_id=revision_id,
        page=page,
        claims=claims,
        prefix=prefix,
        place=lambda: place(page.path),
    )
