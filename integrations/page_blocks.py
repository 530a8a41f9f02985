"""Integration blocks in the documentation product's pages: the integrations app's adapter to
``docplatform.reading.blocks`` (its provider, registered in ``IntegrationsConfig.ready``):
the quick insert menu's entries, each inserted block rendered through the component service
(``services.components``) with the markup the marketplace's pages show (the marketplace lends
the template, ``marketplace/_page_block.html``, by name; the icons' address is its
``marketplace:asset``, by name too: a string is not an import), and its buttons dispatched.

A block is rendered by the installation of its integration that covers the space (the space's
own installation first, else the organization's whose space selection covers it). Its state is
kept per (installation, component, space, key): the component instance is
``<space id>-<key>``, so a new revision of the page keeps it.
"""

import hashlib
import json

from django.conf import settings
from django.core.cache import cache
from django.template.loader import render_to_string
from django.urls import reverse

from docplatform.reading.blocks import BlockChoice, BlockPlace, notice_html

from .component_forms import ComponentActionForm, page_markup
from .gateway.failures import RuntimeFailure
from .models import Installation
from .policies import effective_status, is_receiving
from .selectors import icon_ids, installations_covering_space
from .services.components import ComponentRequest, components_render

#: Blocks rendered on one page at most; the others show a box (a page cannot make one read
#: call the runtime without bound).
MAX_BLOCKS_PER_PAGE = 30


def block_instance(space_id: str, key: str) -> str:
    return f"{space_id}-{key}"


class IntegrationBlocks:
    def choices(self, space, user) -> list[BlockChoice]:
        installations = _by_integration(space)
        icons = icon_ids([i.integration for i in installations.values()])
        choices = []
        for installation in installations.values():
            if not is_receiving(installation):
                continue
            integration = installation.integration
            icon = icons.get(integration.pk)
            for block in integration.blocks:
                choices.append(
                    BlockChoice(
                        integration=integration.name,
                        integration_title=integration.title,
                        block=block["id"],
                        title=block.get("title") or block["id"],
                        description=block.get("description", ""),
                        icon_url=reverse("marketplace:asset", args=[icon]) if icon else None,
                    )
                )
        return choices

    def render(self, refs, place: BlockPlace) -> dict[int, str]:
        if not refs:
            return {}
        installations = _by_integration(place.space)
        shown: dict[int, str] = {}
        asked: list[tuple] = []
        for ref in refs:
            if ref.index >= MAX_BLOCKS_PER_PAGE:
                shown[ref.index] = notice_html(
                    f"A page shows at most {MAX_BLOCKS_PER_PAGE} blocks; this one is left out.",
                    title=_title(ref),
                )
                continue
            found = _installation_for(ref, installations)
            if isinstance(found, str):
                shown[ref.index] = notice_html(found, title=_title(ref))
                continue
            asked.append((ref, found))
        results = components_render(
            [
                ComponentRequest(
                    installation,
                    ref.block,
                    block_instance(place.space.pk, ref.key),
                    ref.props,
                )
                for ref, installation in asked
            ],
            deadline=settings.BLOCK_RENDER_DEADLINE,
        )
        for (ref, installation), result in zip(asked, results, strict=True):
            shown[ref.index] = _html(ref, installation, result, place)
        return shown

    def act(self, ref, place: BlockPlace, data) -> str:
        installation = _installation_for(ref, _by_integration(place.space))
        if isinstance(installation, str):
            return notice_html(installation, title=_title(ref))
        if not takes_presses(_block_entry(installation, ref.block), place):
            return notice_html(
                "This block's buttons do not work here: its integration has not made them "
                "for the site's visitors.",
                title=_title(ref),
            )
        form = ComponentActionForm(data)
        if not form.is_valid():
            return notice_html(ComponentActionForm.MALFORMED, title=_title(ref))
        instance = block_instance(place.space.pk, ref.key)
        result = None
        # Each action in turn (the next one sees the state the last one left), then the
        # render a page shows when there was none: one render path (``components_render``).
        for action in form.cleaned_data["actions"] or [None]:
            [result] = components_render(
                [ComponentRequest(installation, ref.block, instance, ref.props, action)],
                deadline=None if action else settings.BLOCK_RENDER_DEADLINE,
            )
            if isinstance(result, Exception):
                break
        return _html(ref, installation, result, place)


def _by_integration(space) -> dict[str, Installation]:
    """The installation that renders each integration's blocks in ``space``."""
    chosen: dict[str, Installation] = {}
    for installation in installations_covering_space(space):
        chosen.setdefault(installation.integration.name, installation)
    return chosen


def _installation_for(ref, installations: dict) -> Installation | str:
    """The installation rendering ``ref``, or why none may."""
    if ref.error:
        return f"This block cannot be shown: {ref.error}."
    installation = installations.get(ref.integration)
    if installation is None:
        return (
            f"The integration {ref.integration!r} is not installed on this space, so its "
            f"block {ref.block!r} cannot be shown."
        )
    if ref.block not in {block["id"] for block in installation.integration.blocks}:
        return f"The integration {ref.integration!r} has no block {ref.block!r} any more."
    if not is_receiving(installation):
        status = effective_status(installation)
        return f"{installation.integration.title} is {status.status}: {status.text}"
    return installation


def _title(ref) -> str:
    return f"{ref.integration} · {ref.block}" if ref.integration else "Block"


def takes_presses(block: dict | None, place: BlockPlace) -> bool:
    """Whether the block's buttons work here: where the place takes presses at all, and on a
    published site's page (``for_visitors``) only for a block whose manifest entry says
    ``visitors: true``."""
    if not place.interactive or block is None:
        return False
    return not place.for_visitors or block.get("visitors") is True


def _block_entry(installation, block_id: str) -> dict | None:
    return next((b for b in installation.integration.blocks if b["id"] == block_id), None)


def _html(ref, installation, result, place: BlockPlace) -> str:
    block = _block_entry(installation, ref.block)
    title = (block.get("title") or block["id"]) if block else ref.block
    heading = f"{installation.integration.title} · {title}"
    if isinstance(result, RuntimeFailure):
        return notice_html(f"This block could not be shown: {result.message}.", title=heading)
    if isinstance(result, Exception):
        return notice_html(f"This block could not be shown: {result}.", title=heading)
    instance = block_instance(place.space.pk, ref.key)
    interactive = takes_presses(block, place)
    # The same markup in the same place makes the same HTML: kept, as templates cost more
    # than the rest of a warm block. A form's CSRF token is the one of the reader's secret
    # (a site's visitors have no session, so their forms carry none).
    with_token = interactive and not place.for_visitors
    secret = place.request.META.get("CSRF_COOKIE") if with_token else ""
    inputs = [heading, instance, interactive, with_token, place.action_url, place.page_path]
    inputs.append(secret)
    digest = hashlib.sha256(json.dumps([inputs, result.element], sort_keys=True).encode())
    key = f"page-block-html:1:{digest.hexdigest()}"
    html = cache.get(key) if secret is not None else None
    if html is None:
        html = render_to_string(
            "marketplace/_page_block.html",
            {
                "heading": heading,
                "key": ref.key,
                "instance": instance,
                "markup": page_markup(result.element, instance),
                "place": place,
                "interactive": interactive,
                "with_token": with_token,
            },
            request=place.request,
        )
        if secret is not None:
            cache.set(key, html, 3600)
    return html
