"""Test events: an event of any type the installation may receive, with the catalogue's
sample payload, sent to that installation alone (never to others in its space or site)."""

from django.core.exceptions import ValidationError
from django.db import transaction

from docplatform import events
from docplatform.events.catalogue import CATALOGUE
from docplatform.events.models import Delivery
from integrations.models import Installation

from ..selectors import receivable_event_types
from ..services_admin import (
    webhook_admin_check,
    webhook_installation_check,
    webhook_receiving_check,
)


def sample_event_payload(installation: Installation, event_type: str) -> dict:
    """The sample payload of ``event_type`` for the installation: its own space and site ids,
    the catalogue's samples for the rest."""
    known = {}
    if installation.space_id:
        known["spaceId"] = installation.space_id
    if installation.site_id:
        known["siteId"] = installation.site_id
        space_id = installation.site.spaces.values_list("pk", flat=True).first()
        if space_id:
            known["spaceId"] = space_id
    return CATALOGUE[event_type].sample(**known)


#: Where the preview shows the eventId, which each delivery gets anew when it is sent.
EVENT_ID_PLACEHOLDER = "(a new UUID for each delivery)"


def sample_event_body(installation: Installation, event_type: str) -> dict:
    """The body a test event of ``event_type`` is sent with, as the receiver gets it
    (``payload_for``'s shape: type, eventId, installationId, then the event's fields)."""
    return {
        "type": event_type,
        "eventId": EVENT_ID_PLACEHOLDER,
        "installationId": installation.pk,
        **sample_event_payload(installation, event_type),
    }


def sample_event_type_check(installation: Installation, event_type: str) -> None:
    """Refuse a test event of a type the installation does not receive."""
    receivable = receivable_event_types(installation)
    if event_type not in receivable:
        raise ValidationError(
            {
                "event_type": [
                    f"event_type {event_type!r} is not an event this installation receives; "
                    f"one of {', '.join(receivable)}"
                ]
            }
        )


def webhook_test_event_send(*, user, installation: Installation, event_type: str) -> Delivery:
    """Send a test event of ``event_type`` to the installation (an admin of the installing
    organization); its delivery."""
    webhook_admin_check(user, installation, "send test events")
    webhook_installation_check(installation)
    sample_event_type_check(installation, event_type)
    webhook_receiving_check(installation)
    with transaction.atomic():
        event = events.fire(
            event_type,
            organization=installation.organization,
            space=installation.space,
            site=installation.site,
            installation=installation,
            **sample_event_payload(installation, event_type),
        )
        return event.deliveries.select_related("event").get()
