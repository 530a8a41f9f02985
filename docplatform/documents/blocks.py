"""Integration blocks in pages, through a provider the integrations' side registers (the host
imports no plug-in app): the quick insert menu's entries for a space, and each inserted
block rendered to HTML where a page is shown, or its action dispatched.

A block is stored in the page's Markdown as a fenced code block (``docplatform.markdown``);
the provider decides which installation renders it and how.
"""

from dataclasses import dataclass
from typing import Protocol

from django.utils.html import format_html

from ..models import Space
from ..rendering import BlockRef


@dataclass(frozen=True)
class BlockChoice:
    """One entry of the quick insert menu."""

    integration: str
    integration_title: str
    block: str
    title: str
    description: str
    icon_url: str | None = None


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


def provider() -> BlockProvider:
    return _provider[0]


def notice_html(message: str, *, title: str = "") -> str:
    """The inline box shown where a block cannot be."""
    return format_html(
        '<div class="page-block page-block-notice" role="note">'
        '<p class="page-block-head">{}</p><p>{}</p></div>',
        title or "Block",
        message,
    )
