"""The product's one Markdown renderer: pages, previews, sites and integration summaries.

markdown-it-py parses CommonMark with tables and strikethrough, raw HTML off. The token stream
is then adjusted (heading anchors and levels, table alignment as classes, links and images
with an unsafe address reduced to their text) and the HTML goes through nh3 (Ammonia), a
second wall that keeps only what this renderer emits.

A fenced code block whose info string is ``block`` is an integration block. ``parse_document``
returns its reference and leaves a placeholder in the HTML that only this call can produce (a
per-call random nonce), so the caller substitutes each block's trusted HTML after sanitizing.

A fenced code block whose info string is ``adaptive <condition>`` is an adaptive section
(README, "Adaptive content"): its body is Markdown, shown only to visitors whose claims make
the condition (``conditions``) hold. The page is rendered once, whoever reads it:
each section is rendered apart (``Document.sections``, its headings and blocks marked with
its index) and leaves a placeholder, so the stored rendering stays one per page and a
published site picks the sections a visitor sees when it serves the page
(``Document.selected``), and the organization's reader shows them all, each marked with its
condition (``Document.marked``). Sections do not nest.
"""

import json
import re
import secrets
import unicodedata
from dataclasses import dataclass, field

import nh3
from django.utils.safestring import SafeString, mark_safe
from markdown_it import MarkdownIt
from markdown_it.token import Token

from .conditions import ConditionError, parse
from .rendering import (
    BlockRef,
    Document,
    Heading,
    Section,
    placeholder_prefix,
    section_prefix,
)

BLOCK_KEY_RE = re.compile(r"[A-Za-z0-9_-]{1,24}")
BLOCK_INFO = "block"
ADAPTIVE_INFO = "adaptive"
MAX_BLOCK_BYTES = 64 * 1024

_LANGUAGE_CLASS = re.compile(r"language-[A-Za-z0-9_+-]+")
_SCHEME = re.compile(r"([A-Za-z][A-Za-z0-9+.-]*):")
_LINK_SCHEMES = frozenset({"http", "https", "mailto"})
_IMAGE_SCHEMES = frozenset({"http", "https"})
_ALIGN_CLASSES = {"left": "align-left", "center": "align-center", "right": "align-right"}
_ANCHOR_LABEL = "Link to this section"
#: Goes up when the renderer's output changes: pages rendered before are rendered again.
RENDERER_VERSION = 2


def parse_document(text: str, *, heading_offset: int = 0) -> Document:
    """The page's HTML, table of contents and block references (see the module docstring)."""
    return _render(text, heading_offset, live_blocks=True)


def render_markdown(text: str, *, heading_offset: int = 0) -> SafeString:
    """For text without live blocks (integration summaries): block fences shown as an escaped
    code block (as any other Markdown tool shows them)."""
    return mark_safe(_render(text, heading_offset, live_blocks=False).html)  # noqa: S308


def block_fence(*, integration: str, block: str, key: str, props: dict) -> str:
    """The Markdown of one inserted block: "```block\\n" + compact JSON on one line + "\\n```\\n".

    Raises ValueError with the reason ``parse_document`` would give for a bad block.
    """
    body = json.dumps(
        {"integration": integration, "block": block, "key": key, "props": props},
        ensure_ascii=False,  # json.dumps still escapes every line break, so it stays one line
        separators=(",", ":"),
    )
    error = _block_error(body, _block_object(body))
    if error:
        raise ValueError(error)
    return f"```{BLOCK_INFO}\n{body}\n```\n"


def new_block_key() -> str:
    """12 random url-safe characters, a fresh block's key."""
    return secrets.token_urlsafe(9)


@dataclass
class _Rendering:
    """What one document's rendering gathers, its adaptive sections' included."""

    live_blocks: bool
    heading_offset: int
    headings: list[Heading] = field(default_factory=list)
    blocks: list[BlockRef] = field(default_factory=list)
    sections: list = field(default_factory=list)
    keys: set[str] = field(default_factory=set)  # of the valid blocks so far
    anchors: set[str] = field(default_factory=set)
    nonce: str = ""

    def placeholder_nonce(self) -> str:
        self.nonce = self.nonce or secrets.token_hex(16)
        return self.nonce


def _render(text: str, heading_offset: int, *, live_blocks: bool) -> Document:
    text = text or ""
    if not text.isascii():
        # A lone surrogate (JSON allows "\ud800") cannot be encoded: it becomes "?".
        text = text.encode("utf-8", "replace").decode("utf-8")
    state = _Rendering(live_blocks=live_blocks, heading_offset=heading_offset)
    html = _render_part(state, text, section=None)
    return Document(
        html=mark_safe(html),  # noqa: S308
        headings=state.headings,
        blocks=state.blocks,
        nonce=state.nonce,
        sections=state.sections,
    )


def _render_part(state: _Rendering, text: str, *, section: int | None) -> str:
    """The sanitized HTML of ``text`` (the page, or one adaptive section's body)."""
    tokens = _MD.parse(text)
    for i, token in enumerate(tokens):
        if token.type == "inline":
            _drop_unsafe_addresses(token)
        elif token.type == "heading_open":
            _heading(state, tokens, i, section)
        elif token.type in ("th_open", "td_open"):
            _alignment_to_class(token)
        elif state.live_blocks and token.type == "fence" and token.info.strip() == BLOCK_INFO:
            nonce = state.placeholder_nonce()
            ref = _block_ref(len(state.blocks), token.content, state.keys, section)
            if not ref.error:
                state.keys.add(ref.key)
            state.blocks.append(ref)
            token.meta["placeholder"] = f"{placeholder_prefix(nonce)}{ref.index}</p>\n"
        elif state.live_blocks and section is None and _is_adaptive(token):
            nonce = state.placeholder_nonce()
            index = len(state.sections)
            state.sections.append(None)  # its place, before the sections' blocks are counted
            condition = _adaptive_condition(token)
            state.sections[index] = Section(
                index=index,
                condition=condition,
                html=_render_part(state, token.content, section=index),
                error=condition_problem(condition),
            )
            token.meta["placeholder"] = f"{section_prefix(nonce)}{index}</p>\n"
    return _CLEANER.clean(_MD.renderer.render(tokens, _MD.options, {}))


# Adaptive sections


def _is_adaptive(token: Token) -> bool:
    return token.type == "fence" and token.info.split(maxsplit=1)[:1] == [ADAPTIVE_INFO]


def _adaptive_condition(token: Token) -> str:
    return token.info.strip()[len(ADAPTIVE_INFO) :].strip()


def condition_problem(condition: str) -> str | None:
    """Why a condition cannot be used (``conditions``), or None."""
    try:
        parse(condition)
    except ConditionError as error:
        return str(error)
    return None


def adaptive_problems(text: str) -> list[str]:
    """Why each adaptive section of ``text`` cannot be saved (its condition, or a section
    inside another), naming the section and its line; [] when all can."""
    if ADAPTIVE_INFO not in (text or ""):
        return []  # spares parsing every page of every save
    problems = []
    sections = [token for token in _MD.parse(text) if _is_adaptive(token)]
    for number, token in enumerate(sections, start=1):
        where = f"adaptive section {number} (line {token.map[0] + 1 if token.map else '?'})"
        problem = condition_problem(_adaptive_condition(token))
        if problem:
            problems.append(f"{where}: its condition {problem}")
        if any(_is_adaptive(inner) for inner in _MD.parse(token.content)):
            problems.append(f"{where}: adaptive sections do not nest")
    return problems


# Headings


def _heading(state: _Rendering, tokens: list[Token], i: int, section: int | None) -> None:
    """Give the heading at ``tokens[i]`` its anchor and shifted level, and list it."""
    token, inline, close = tokens[i], tokens[i + 1], tokens[i + 2]
    level = int(token.tag[1])
    text = _plain_text(inline.children or [])
    anchor = base = _slug(text)
    suffix = 0
    while anchor in state.anchors:
        suffix += 1
        anchor = f"{base}-{suffix}"
    state.anchors.add(anchor)
    state.headings.append(Heading(level=level, text=text, anchor=anchor, section=section))
    token.tag = close.tag = f"h{max(1, min(6, level + state.heading_offset))}"
    token.attrSet("id", anchor)
    children = inline.children or []
    space = [Token("text", "", 0, content=" ")] if children else []
    inline.children = [*children, *space, *_anchor_tokens(anchor)]


def _plain_text(children: list[Token]) -> str:
    parts = []
    for child in children:
        if child.type in ("text", "code_inline", "image"):  # an image's content is its alt text
            parts.append(child.content)
        elif child.type in ("softbreak", "hardbreak"):
            parts.append(" ")
    return " ".join("".join(parts).split())


def _slug(text: str) -> str:
    """Lower-case letters, marks and digits, '-' for spaces, punctuation and symbols dropped."""
    kept = "".join(
        char
        for char in text.lower()
        if char.isalnum() or char.isspace() or char in "-_" or unicodedata.category(char)[0] == "M"
    )
    return "-".join(kept.split()) or "section"


def _anchor_tokens(anchor: str) -> list[Token]:
    link = Token("link_open", "a", 1)
    link.attrs = {"href": f"#{anchor}", "class": "anchor", "aria-label": _ANCHOR_LABEL}
    return [link, Token("text", "", 0, content="#"), Token("link_close", "a", -1)]


# Links, images, tables


def _allowed_address(url: str, schemes: frozenset[str]) -> bool:
    """Relative addresses and fragments, or one of `schemes`."""
    scheme = _SCHEME.match(url)
    return scheme is None or scheme[1].lower() in schemes


def _drop_unsafe_addresses(inline: Token) -> None:
    """A link with an unsafe address keeps its text; an image keeps its alt text."""
    children: list[Token] = []
    dropped_links: list[bool] = []  # one entry per open link, innermost last
    for child in inline.children or []:
        if child.type == "link_open":
            unsafe = not _allowed_address(str(child.attrGet("href") or ""), _LINK_SCHEMES)
            dropped_links.append(unsafe)
            if unsafe:
                continue
        elif child.type == "link_close" and dropped_links and dropped_links.pop():
            continue
        elif child.type == "image" and not _allowed_address(
            str(child.attrGet("src") or ""), _IMAGE_SCHEMES
        ):
            child = Token("text", "", 0, content=child.content)
        children.append(child)
    inline.children = children


def _alignment_to_class(cell: Token) -> None:
    """markdown-it aligns cells with style="text-align:x"; the sanitizer allows no style."""
    style = str(cell.attrGet("style") or "")
    cell.attrs.pop("style", None)
    align = _ALIGN_CLASSES.get(style.partition(":")[2].strip())
    if align:
        cell.attrSet("class", align)


# Block fences


def _block_ref(index: int, body: str, keys_before: set[str], section: int | None) -> BlockRef:
    data = _block_object(body)
    fields = data if isinstance(data, dict) else {}

    def text(name: str) -> str:
        value = fields.get(name)
        return value if isinstance(value, str) else ""

    key = text("key") if BLOCK_KEY_RE.fullmatch(text("key")) else ""
    props = fields.get("props")
    error = _block_error(body, data)
    if not error and key in keys_before:
        error = f"the key {key!r} is used by another block on this page"
    return BlockRef(
        index=index,
        key=key,
        integration=text("integration"),
        block=text("block"),
        props=props if isinstance(props, dict) else {},
        error=error,
        section=section,
    )


_NOT_JSON = object()


def _reject_constant(name: str) -> None:
    raise ValueError(f"{name} is not a JSON number")


def _block_object(body: str) -> object:
    """The fence's JSON value, or _NOT_JSON."""
    if len(body.encode()) > MAX_BLOCK_BYTES:
        return _NOT_JSON
    try:
        return json.loads(body, parse_constant=_reject_constant)
    except (ValueError, RecursionError):
        return _NOT_JSON


def _block_error(body: str, data: object) -> str | None:
    """Why a block fence's body (`data` parsed) is not a valid block, in one line naming the
    field; None if it is."""
    if len(body.encode()) > MAX_BLOCK_BYTES:
        return "the block is larger than 64 KiB"
    if data is _NOT_JSON:
        return "the block is not valid JSON"
    if not isinstance(data, dict):
        return "the block must be one JSON object"
    for name in ("integration", "block"):
        value = data.get(name)
        if not isinstance(value, str) or not value.strip():
            return f"{name} must be a non-empty string"
    key = data.get("key")
    if not isinstance(key, str) or not BLOCK_KEY_RE.fullmatch(key):
        return "key must be 1 to 24 letters, digits, '-' or '_'"
    if not isinstance(data.get("props"), dict):
        return "props must be a JSON object"
    return None


# The parser and the sanitizer, built once.


def _render_fence(self, tokens: list[Token], idx: int, options, env) -> str:
    """A block fence's placeholder, any other fence as code."""
    placeholder = tokens[idx].meta.get("placeholder")
    return placeholder if placeholder else _DEFAULT_FENCE(tokens, idx, options, env)


def _filter_attribute(tag: str, attribute: str, value: str) -> str | None:
    """Code keeps only language classes; images load only over http(s) or relative addresses."""
    if tag == "code" and attribute == "class":
        return " ".join(c for c in value.split() if _LANGUAGE_CLASS.fullmatch(c)) or None
    if tag == "img" and attribute == "src":
        return value if _allowed_address(value, _IMAGE_SCHEMES) else None
    return value


_MD = MarkdownIt(
    "commonmark", {"html": False, "typographer": False, "linkify": False, "xhtmlOut": False}
).enable(["table", "strikethrough"])
# Every address is accepted by the parser, so that a link with an unsafe one still parses and
# keeps its text: _drop_unsafe_addresses decides, and the sanitizer checks again.
_MD.validateLink = lambda url: True
_DEFAULT_FENCE = _MD.renderer.rules["fence"]
_MD.add_render_rule("fence", _render_fence)

_CLEANER = nh3.Cleaner(
    tags={
        *("p", "h1", "h2", "h3", "h4", "h5", "h6", "ul", "ol", "li", "a", "img", "code", "pre"),
        *("blockquote", "em", "strong", "s", "del", "hr", "br"),
        *("table", "thead", "tbody", "tr", "th", "td"),
    },
    attributes={
        "a": {"href", "title"},
        "img": {"src", "alt", "title"},
        "code": {"class"},
        "ol": {"start"},
        **{f"h{level}": {"id"} for level in range(1, 7)},
    },
    attribute_filter=_filter_attribute,
    tag_attribute_values={"a": {"aria-label": {_ANCHOR_LABEL}}},
    allowed_classes={
        "a": {"anchor"},
        "th": set(_ALIGN_CLASSES.values()),
        "td": set(_ALIGN_CLASSES.values()),
    },
    url_schemes=set(_LINK_SCHEMES),
    link_rel="noopener noreferrer nofollow",
)
