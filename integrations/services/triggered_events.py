"""Test events: a real event of a type an installation receives, made from the catalogue's
sample payload with the installation's own ids, fired through the outbox to that one
installation (never to the others in its space or site), as ``trigger`` on the command line,
the API's ``installations/{id}/test-events/`` and a webhook's Send test event do. It is a
test event (``Event.test``): its body carries ``"test": true``, the events API and the logs
show it as a test, a replay never sends it, and a redelivery resends it to that installation
alone (a delivery is one installation's; the outbox adds no other delivery of it).

Where it happens: a space event in the installation's space, or for an organization
installation in a space its space selection covers (the one asked for, else the first); a
site event on the installation's site, or for an organization installation a site it reaches.
"""

from dataclasses import dataclass

from django.core.exceptions import ValidationError
from django.db import transaction
from docplatform_sdk.manifest.base import hint

from docplatform import events
from docplatform.access import Action
from docplatform.events.catalogue import CATALOGUE
from docplatform.events.models import Delivery
from docplatform.models import Site, Space
from docplatform.reading.navigation import first_page
from docplatform.sites.addresses import site_page_address

from ..models import Installation
from ..policies import act_check, installation_has_scope, not_receiving_reason
from ..selectors import sites_reachable_by, spaces_reachable_by

#: The event types of each installation level: where its installations receive events.
LEVEL_EVENTS = {
    Installation.Level.SPACE: events.SPACE_EVENTS,
    Installation.Level.SITE: events.SITE_EVENTS,
    Installation.Level.ORGANIZATION: events.SPACE_EVENTS + events.SITE_EVENTS,
}


@dataclass(frozen=True)
class EventPlace:
    """Where a test event happens: the space and (for a site event) the site."""

    space: Space | None
    site: Site | None


def trigger_event_types(installation: Installation) -> list[str]:
    """The platform event types a test event to ``installation`` may have: those of its level
    whose scope it acts with (``policies.installation_has_scope``)."""
    return [
        event_type
        for event_type in LEVEL_EVENTS[installation.level]
        if CATALOGUE[event_type].scope is None
        or installation_has_scope(installation, CATALOGUE[event_type].scope)
    ]


def trigger_type_check(installation: Installation, event_type: str) -> None:
    """Refuse a type the installation does not receive, naming ``type`` and saying why."""
    if event_type not in CATALOGUE or event_type not in LEVEL_EVENTS[installation.level]:
        level = installation.level
        kinds = LEVEL_EVENTS[level]
        article = "an" if level[0] in "aeiou" else "a"
        raise ValidationError(
            {
                "type": [
                    f"{event_type!r} is not an event {article} {level} installation receives"
                    f"{hint(event_type, kinds)}; one of {', '.join(kinds)}"
                ]
            }
        )
    scope = CATALOGUE[event_type].scope
    if scope is not None and not installation_has_scope(installation, scope):
        raise ValidationError(
            {
                "type": [
                    f"{event_type} needs the scope {scope}, which this installation does not "
                    f"act with: add it to the manifest's scopes (and approve it)"
                ]
            }
        )


def trigger_place(
    installation: Installation,
    event_type: str,
    *,
    space_id: str | None = None,
    site_id: str | None = None,
) -> EventPlace:
    """The space and site a test event of ``event_type`` happens in; a space or site the
    installation does not reach is refused naming ``space`` or ``site``."""
    if event_type in events.SITE_EVENTS:
        sites = sites_reachable_by(installation).order_by("created_at", "pk")
        site = _reached(sites, site_id, "site", installation)
        space = site.spaces.order_by("created_at", "pk").first()
        return EventPlace(space=space, site=site)
    if site_id is not None:
        raise ValidationError({"site": [f"{event_type} happens in a space, not on a site"]})
    spaces = spaces_reachable_by(installation).order_by("created_at", "pk")
    return EventPlace(space=_reached(spaces, space_id, "space", installation), site=None)


def _reached(rows, pk: str | None, what: str, installation: Installation):
    row = rows.filter(pk=pk).first() if pk is not None else rows.first()
    if row is not None:
        return row
    if pk is not None:
        raise ValidationError({what: [f"{what} {pk} is not one this installation reaches"]})
    raise ValidationError(
        {what: [f"the installation reaches no {what} yet: make one in its organization first"]}
    )


def trigger_payload(installation: Installation, event_type: str, place: EventPlace):
    """The sample payload of ``event_type`` with the place's ids (the space's current
    revision; on a site, its space's first page and that page's address), the catalogue's
    samples for the other fields."""
    known = {}
    if place.space is not None:
        known["spaceId"] = place.space.pk
        if place.space.current_revision_id:
            known["revisionId"] = place.space.current_revision_id
    if place.site is not None:
        page = first_page(place.space)
        known["siteId"] = place.site.pk
        known["url"] = site_page_address(place.site, place.space, page)
        if page is not None:
            known["pageId"] = page.pk
    return CATALOGUE[event_type].sample(**known)


def trigger_sender_check(user, installation: Installation) -> None:
    """Test events reach the installation's code or receiver with made-up data: its
    organization's admins only (or an operator)."""
    act_check(user, Action.SEND_TEST_EVENTS, installation)


def trigger_receiving_check(installation: Installation) -> None:
    """Refuse an installation no event reaches now (paused, pending), naming ``status``."""
    reason = not_receiving_reason(installation)
    if reason is not None:
        raise ValidationError({"status": [reason]})


def trigger_fire(
    installation: Installation, event_type: str, place: EventPlace, payload: dict
) -> Delivery:
    """Fire the event to the installation alone; its delivery. An installation whose
    consumer does not take the type (a webhook's event selection) is refused naming
    ``type``, and nothing is recorded."""
    with transaction.atomic():
        event = events.fire(
            event_type,
            organization=installation.organization,
            space=place.space,
            site=place.site,
            installation=installation,
            test=True,
            **payload,
        )
        delivery = event.deliveries.select_related("event").first()
        if delivery is None:
            transaction.set_rollback(True)
    if delivery is None:
        raise ValidationError(
            {"type": [f"the installation does not take {event_type} events (its configuration)"]}
        )
    return delivery


def installation_event_trigger(
    *,
    user,
    installation: Installation,
    event_type: str,
    space_id: str | None = None,
    site_id: str | None = None,
) -> Delivery:
    """Send ``installation`` a test event of ``event_type`` (an admin of the installing
    organization); its delivery, queued once this commits."""
    trigger_sender_check(user, installation)
    trigger_type_check(installation, event_type)
    trigger_receiving_check(installation)
    place = trigger_place(installation, event_type, space_id=space_id, site_id=site_id)
    return trigger_fire(
        installation, event_type, place, trigger_payload(installation, event_type, place)
    )
