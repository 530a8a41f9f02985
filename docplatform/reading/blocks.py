"""Blocks in pages: the quick insert menu's entries for a space, and each inserted block
rendered to HTML where a page is shown, or its action dispatched.

A block is stored in the page's Markdown as a fenced code block (``docplatform.markdown``).
Integration blocks go through a provider the integrations' side registers (the host imports
no plug-in app), which decides which installation renders each and how. The host's own
blocks (``BUILTIN``: the OpenAPI operation block, which the OpenAPI feature registers with
``register_builtin``) it renders itself, calling nothing.
"""

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Protocol

from django.utils.html import format_html

from ..models import Space
from ..rendering import BlockRef

#: The ``integration`` of the host's own blocks: no integration can be named so.
BUILTIN = "@docplatform"
#: The host's own blocks rendered on one page at most (they read no runtime, but each is
#: rendered from its document).
MAX_BUILTIN_BLOCKS = 100


@dataclass(frozen=True)
class BlockChoice:
    """One entry of the quick insert menu."""

    integration: str
    integration_title: str
    block: str
    title: str
    description: str
    icon_url: str | None = None
    #: What the block is inserted with (the OpenAPI operation block: its document and
    #: operation).
    props: dict = field(default_factory=dict)


@dataclass(frozen=True)
class BlockPlace:
    """Where blocks are shown: the space and page, who looks, and whether they may press the
    blocks' buttons here (``action_url`` receives them). ``for_visitors``: a published site's
    page, where only the blocks whose manifest entry says ``visitors: true`` take presses
    (the others are shown read-only)."""

    space: Space
    page_path: str
    request: object
    interactive: bool
    action_url: str = ""
    for_visitors: bool = False


class BlockProvider(Protocol):
    def choices(self, space: Space, user) -> list[BlockChoice]:
        """The blocks people of the space may insert."""

    def render(self, refs: list[BlockRef], place: BlockPlace) -> dict[int, str]:
        """Each block's HTML (trusted: escaped markup, forms), by ``ref.index``."""

    def act(self, ref: BlockRef, place: BlockPlace, data) -> str:
        """Dispatch the submitted form ``data`` to the block; its HTML afterwards."""


class _NoBlocks:
    """Where no provider is registered: blocks say so in place."""

    def choices(self, space, user):
        return []

    def render(self, refs, place):
        return {
            ref.index: notice_html("Integration blocks are not available here.") for ref in refs
        }

    def act(self, ref, place, data):
        return notice_html("Integration blocks are not available here.")


_provider: list[BlockProvider] = [_NoBlocks()]


def register_provider(provider: BlockProvider) -> None:
    _provider[0] = provider


@dataclass(frozen=True)
class BuiltinBlock:
    """One of the host's own blocks: its id and title, the choices it offers the quick
    insert menu of an organization's spaces, its HTML for ``props`` (``specs``: what one page
    read already), and the exception that says it cannot be shown (its message shown)."""

    block_id: str
    title: str
    choices: Callable[[str], list[dict]]
    html: Callable[[dict, str, dict | None], str]
    unavailable: type[Exception]


_builtins: dict[str, BuiltinBlock] = {}


def register_builtin(block: BuiltinBlock) -> None:
    _builtins[block.block_id] = block


class _WithBuiltins:
    """The registered provider, with the host's own blocks rendered here."""

    def __init__(self, integrations: BlockProvider):
        self.integrations = integrations

    def choices(self, space: Space, user) -> list[BlockChoice]:
        builtins = [
            BlockChoice(
                integration=BUILTIN,
                integration_title=builtin.title,
                block=builtin.block_id,
                title=choice["title"],
                description=choice["description"],
                props=choice["props"],
            )
            for builtin in _builtins.values()
            for choice in builtin.choices(space.organization_id)
        ]
        return builtins + self.integrations.choices(space, user)

    def render(self, refs: list[BlockRef], place: BlockPlace) -> dict[int, str]:
        others = [ref for ref in refs if ref.integration != BUILTIN]
        shown = self.integrations.render(others, place) if others else {}
        specs: dict = {}  # each document read once per page
        builtins = [ref for ref in refs if ref.integration == BUILTIN]
        for count, ref in enumerate(builtins):
            if count >= MAX_BUILTIN_BLOCKS:
                shown[ref.index] = notice_html(
                    f"A page shows at most {MAX_BUILTIN_BLOCKS} of these blocks; this one is "
                    "left out.",
                    title=_builtins[ref.block].title if ref.block in _builtins else "",
                )
            else:
                shown[ref.index] = _builtin_html(ref, place, specs)
        return shown

    def act(self, ref: BlockRef, place: BlockPlace, data) -> str:
        if ref.integration == BUILTIN:
            return _builtin_html(ref, place)  # it has no buttons: shown again as it is
        return self.integrations.act(ref, place, data)


def _builtin_html(ref: BlockRef, place: BlockPlace, specs: dict | None = None) -> str:
    if ref.error:
        return notice_html(f"This block is not valid: {ref.error}.")
    builtin = _builtins.get(ref.block)
    if builtin is None:
        return notice_html(f"There is no built-in block {ref.block!r}.")
    try:
        return builtin.html(ref.props, place.space.organization_id, specs)
    except builtin.unavailable as missing:
        return notice_html(str(missing), title=builtin.title)


def provider() -> BlockProvider:
    return _WithBuiltins(_provider[0])


def notice_html(message: str, *, title: str = "") -> str:
    """The inline box shown where a block cannot be."""
    return format_html(
        '<div class="page-block page-block-notice" role="note">'
        '<p class="page-block-head">{}</p><p>{}</p></div>',
        title or "Block",
        message,
    )
