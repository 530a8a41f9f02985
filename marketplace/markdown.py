"""A tiny Markdown renderer for integration summaries: headings, paragraphs, lists, links.

The text is escaped before any markup is added, so a summary can never inject HTML; links
keep only http(s) and mailto addresses. Anything else shows as plain text.
"""

import re

from django.utils.html import escape
from django.utils.safestring import SafeString, mark_safe

_HEADING = re.compile(r"^(#{1,6})\s+(.+?)\s*#*\s*$")
_BULLET = re.compile(r"^\s*[-*+]\s+(.+)$")
_NUMBERED = re.compile(r"^\s*\d+[.)]\s+(.+)$")
_CODE = re.compile(r"`([^`]+)`")
_STRONG = re.compile(r"\*\*([^*]+)\*\*")
_LINK = re.compile(r"\[([^\]]+)\]\(((?:https?://|mailto:)[^)\s]+)\)")
#: Summary headings sit under the page's own title and section headings.
_HEADING_OFFSET = 2


def _inline(text: str) -> str:
    html = escape(text)
    html = _CODE.sub(r"<code>\1</code>", html)
    html = _STRONG.sub(r"<strong>\1</strong>", html)
    return _LINK.sub(r'<a href="\2" rel="nofollow noopener noreferrer">\1</a>', html)


def render_markdown(text: str) -> SafeString:
    blocks: list[str] = []
    paragraph: list[str] = []
    list_tag, items = "", []

    def close_paragraph():
        if paragraph:
            blocks.append(f"<p>{_inline(' '.join(paragraph))}</p>")
            paragraph.clear()

    def close_list():
        nonlocal list_tag
        if items:
            entries = "".join(f"<li>{_inline(item)}</li>" for item in items)
            blocks.append(f"<{list_tag}>{entries}</{list_tag}>")
            items.clear()
        list_tag = ""

    for line in (text or "").splitlines():
        heading = _HEADING.match(line)
        item = _BULLET.match(line) or _NUMBERED.match(line)
        if not line.strip():
            close_paragraph()
            close_list()
        elif heading:
            close_paragraph()
            close_list()
            level = min(len(heading.group(1)) + _HEADING_OFFSET, 6)
            blocks.append(f"<h{level}>{_inline(heading.group(2))}</h{level}>")
        elif item:
            close_paragraph()
            tag = "ul" if _BULLET.match(line) else "ol"
            if tag != list_tag:
                close_list()
                list_tag = tag
            items.append(item.group(1))
        elif items and line[:1].isspace():
            items[-1] += " " + line.strip()
        else:
            close_list()
            paragraph.append(line.strip())
    close_paragraph()
    close_list()
    return mark_safe("\n".join(blocks))  # noqa: S308 - every piece of text went through escape()
