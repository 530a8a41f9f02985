"""What a rendered page is (``markdown`` makes it): its sanitized HTML with placeholders for
its integration blocks and adaptive sections, its headings, its blocks' references and its
sections, kept as JSON in the page's row; and how the HTML is completed when the page is shown
(a visitor's sections chosen, the people's marked, the blocks' HTML put in place)."""

import html as html_module
import re
from dataclasses import dataclass, field

from django.utils.html import escape, strip_tags
from django.utils.safestring import SafeString, mark_safe

_PLACEHOLDER = "dp-block-"
_SECTION_PLACEHOLDER = "dp-section-"
#: The "#" link the renderer adds to each heading: not text of the page.
_HEADING_ANCHOR = re.compile(r'<a [^>]*class="anchor"[^>]*>.*?</a>', re.DOTALL)


@dataclass(frozen=True)
class Heading:
    level: int  # as written in the Markdown (1-6)
    text: str
    anchor: str
    section: int | None = None  # the adaptive section it is in (Document.sections), if any


@dataclass(frozen=True)
class BlockRef:
    index: int  # position among the document's block fences, from 0
    key: str  # "" when unknown
    integration: str  # "" when unknown
    block: str  # "" when unknown
    props: dict  # {} when unknown
    error: str | None = None
    section: int | None = None  # the adaptive section it is in (Document.sections), if any


@dataclass(frozen=True)
class Section:
    """An adaptive section: its condition as written, and its body's sanitized HTML (with the
    placeholders of its blocks); ``error`` says why the condition cannot be parsed (such a
    section is never shown to visitors)."""

    index: int  # position among the document's adaptive fences, from 0
    condition: str
    html: str
    error: str | None = None


@dataclass(frozen=True)
class Document:
    html: str  # sanitized HTML with one placeholder per block fence and adaptive section
    headings: list[Heading]
    blocks: list[BlockRef]
    # The random part of this document's placeholders ("" when it has no block fence).
    nonce: str = field(default="", repr=False)
    sections: list[Section] = field(default_factory=list)

    def selected(self, shown: set[int]) -> "Document":
        """The document as a visitor sees it: the sections whose index is in ``shown`` in
        place, the others gone with their headings and blocks."""
        return self._with_sections(
            {s.index: s.html for s in self.sections if s.index in shown}, shown
        )

    def marked(self) -> "Document":
        """The document as the organization's people read it: every section in place inside
        a box naming its condition."""
        boxes = {
            section.index: format_section(section.condition, section.html, section.error)
            for section in self.sections
        }
        return self._with_sections(boxes, {section.index for section in self.sections})

    def _with_sections(self, html_of: dict[int, str], shown: set[int]) -> "Document":
        if not self.sections:
            return self
        head, *parts = self.html.split(section_prefix(self.nonce))
        pieces = [head]
        for part in parts:
            index, _, rest = part.partition("</p>")
            pieces += [html_of.get(int(index), ""), rest]
        visible = lambda item: item.section is None or item.section in shown  # noqa: E731
        return Document(
            html="".join(pieces),
            headings=[heading for heading in self.headings if visible(heading)],
            blocks=[block for block in self.blocks if visible(block)],
            nonce=self.nonce,
        )

    def with_blocks(self, rendered: dict[int, str]) -> SafeString:
        """The HTML with each block's placeholder replaced by rendered[ref.index] (trusted HTML);
        a block missing from `rendered` becomes an empty string."""
        if not self.nonce:
            return mark_safe(self.html)  # noqa: S308 - sanitized by nh3
        # One pass over the sanitized HTML, so inserted HTML is never searched again.
        head, *parts = self.html.split(placeholder_prefix(self.nonce))
        pieces = [head]
        for part in parts:
            index, _, rest = part.partition("</p>")
            pieces += [rendered.get(int(index), ""), rest]
        return mark_safe("".join(pieces))  # noqa: S308 - sanitized HTML plus the caller's HTML


def plain_text(document: Document) -> str:
    """The plain text of a document as shown (without its blocks, its headings' "#" links,
    and the sections it no longer holds), its whitespace collapsed: what search finds and
    quotes."""
    shown = _HEADING_ANCHOR.sub("", document.with_blocks({}))
    return " ".join(html_module.unescape(strip_tags(shown)).split())


def format_section(condition: str, html: str, error: str | None = None) -> str:
    """A section in a box naming its condition (the reader's and the editor's view)."""
    problem = f'<p class="adaptive-error">{escape(error)}</p>' if error else ""
    return (
        f'<div class="adaptive-section"><p class="adaptive-condition">Shown when '
        f"<code>{escape(condition)}</code></p>{problem}{html}</div>"
    )


def document_as_json(document: Document) -> dict:
    """What a page row keeps of its rendering besides the HTML (``document_from_json``)."""
    return {
        "headings": [[h.level, h.text, h.anchor, h.section] for h in document.headings],
        "blocks": [
            [b.index, b.key, b.integration, b.block, b.props, b.error, b.section]
            for b in document.blocks
        ],
        "nonce": document.nonce,
        "sections": [[s.index, s.condition, s.html, s.error] for s in document.sections],
    }


def document_from_json(html: str, outline: dict) -> Document:
    return Document(
        html=html,
        headings=[Heading(*heading) for heading in outline["headings"]],
        blocks=[BlockRef(*block) for block in outline["blocks"]],
        nonce=outline["nonce"],
        sections=[Section(*section) for section in outline.get("sections", [])],
    )


def placeholder_prefix(nonce: str) -> str:
    """A block's placeholder is this, its index, then "</p>"."""
    return f"<p>{_PLACEHOLDER}{nonce}-"


def section_prefix(nonce: str) -> str:
    """An adaptive section's placeholder is this, its index, then "</p>"."""
    return f"<p>{_SECTION_PLACEHOLDER}{nonce}-"
