"""What a shown page is made of: its Markdown parsed once per page row (rows never change:
a new revision makes new rows), its blocks rendered by the registered provider."""

from django.core.cache import cache
from django.utils.safestring import SafeString

from ..markdown import Document, parse_document
from ..models import Page
from .blocks import BlockPlace, provider

#: Pages with at least this many headings show a table of contents.
TOC_MIN_HEADINGS = 3
_RENDERER_VERSION = 1


def page_document(page: Page) -> Document:
    key = f"page-document:{_RENDERER_VERSION}:{page.pk}"
    document = cache.get(key)
    if document is None:
        document = parse_document(page.body)
        cache.set(key, document, 24 * 3600)
    return document


def shown_html(document: Document, place: BlockPlace) -> SafeString:
    """The document's HTML with its blocks rendered in place."""
    rendered = provider().render(document.blocks, place) if document.blocks else {}
    return document.with_blocks(rendered)


def table_of_contents(document: Document) -> list:
    headings = [heading for heading in document.headings if heading.level <= 3]
    return headings if len(headings) >= TOC_MIN_HEADINGS else []
