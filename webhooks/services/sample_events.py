"""Test events of a webhook installation: ``ping`` or an event it forwards, with the
catalogue's sample payload, sent to that installation alone (the generic pieces, who may
send one and where it happens, are ``integrations.services.triggered_events``)."""

from django.core.exceptions import ValidationError

from docplatform.events.models import Delivery
from integrations.models import Installation
from integrations.services.triggered_events import (
    EventPlace,
    trigger_fire,
    trigger_payload,
    trigger_place,
    trigger_receiving_check,
    trigger_sender_check,
)

from ..rules import PING
from ..selectors import receivable_event_types
from .checks import webhook_endpoint_enabled_check, webhook_installation_check


def sample_event_place(installation: Installation, event_type: str) -> EventPlace:
    """A webhook installation's test event happens in its own space or on its own site (a
    ping too, which carries neither id)."""
    if event_type == PING:
        return EventPlace(space=installation.space, site=installation.site)
    return trigger_place(installation, event_type)


#: Where the preview shows the eventId, which each delivery gets anew when it is sent.
EVENT_ID_PLACEHOLDER = "(a new UUID for each delivery)"


def sample_event_body(installation: Installation, event_type: str) -> dict:
    """The body a test event of ``event_type`` is sent with, as the receiver gets it
    (``payload_for``'s shape: type, eventId, installationId, then the event's fields)."""
    place = sample_event_place(installation, event_type)
    return {
        "type": event_type,
        "eventId": EVENT_ID_PLACEHOLDER,
        "installationId": installation.pk,
        "test": True,
        **trigger_payload(installation, event_type, place),
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
    trigger_sender_check(user, installation)
    webhook_installation_check(installation)
    sample_event_type_check(installation, event_type)
    trigger_receiving_check(installation)
    webhook_endpoint_enabled_check(installation)
    place = sample_event_place(installation, event_type)
    return trigger_fire(
        installation, event_type, place, trigger_payload(installation, event_type, place)
    )
