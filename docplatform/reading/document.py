"""What a shown page is made of: its Markdown rendered when the page was written (a page
version never changes: a revision that changes a page writes a new version), its adaptive
sections as its reader sees them, its blocks rendered by the registered provider."""

from collections.abc import Callable

from django.utils.safestring import SafeString

from ..content import rendered
from ..markdown import RENDERER_VERSION
from ..models import Page
from ..rendering import Document, document_from_json
from .adaptive import for_visitor
from .blocks import BlockPlace, provider

#: Pages with at least this many headings show a table of contents.
TOC_MIN_HEADINGS = 3


def page_document(page: Page) -> Document:
    """The page's rendering, as stored when it was written; a page rendered by an older
    renderer is rendered again and stored (its content never changes)."""
    if page.rendered_with == RENDERER_VERSION:
        return document_from_json(page.html, page.outline)
    fields = rendered(page.body)
    Page.objects.filter(pk=page.pk).update(**fields)
    return document_from_json(fields["html"], fields["outline"])


def as_read(document: Document, claims: dict | None) -> Document:
    """The document as its reader sees it: a visitor with ``claims`` only the adaptive
    sections whose conditions hold; the organization's people (None) every section, marked
    with its condition."""
    return document.marked() if claims is None else for_visitor(document, claims)


def shown_html(document: Document, place: Callable[[], BlockPlace]) -> SafeString:
    """The document's HTML with its blocks rendered in place (``place()`` says where: asked
    only when the document has blocks). Adaptive sections still in it (``as_read`` was not
    applied) are shown marked, as to the organization's people."""
    document = document.marked()
    rendered = provider().render(document.blocks, place()) if document.blocks else {}
    return document.with_blocks(rendered)


def table_of_contents(document: Document) -> list:
    headings = [heading for heading in document.headings if heading.level <= 3]
    return headings if len(headings) >= TOC_MIN_HEADINGS else []
