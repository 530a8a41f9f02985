"""What the webhook integration is, as names and pure rules, below both the services and the
selectors (no database, no import of either): the integration's name, its consumer of the
outbox, the events an installation may forward by where it is installed, the test ping, and
which events an installation forwards (``wants_event``)."""

import uuid

from docplatform.events.catalogue import EventType

WEBHOOK_INTEGRATION = "webhook"
#: The outbox consumer that takes the webhook installations' deliveries.
WEBHOOK_CONSUMER = "webhook"
#: The events a webhook installation may forward, by where it is installed.
SELECTABLE_EVENTS = {
    "space": ("space_content_updated",),
    "site": ("site_view", "page_feedback"),
}
PING = "ping"
#: The test ping, addressed to one installation: it carries no fields of its own (its schema:
#: the envelope alone, ``docplatform.events.schemas``).
PING_EVENT = EventType(
    PING,
    scope=None,
    where="installation",
    fields=(),
    description="A webhook installation's test ping (the installation's Send ping).",
)


def wants_event(recipient, event_type: str) -> bool:
    """A webhook installation forwards the events its configuration switches on (and pings)."""
    return event_type == PING or recipient.configuration.get(event_type) is True


#: The namespace of the eventIds a replay gives the events an endpoint never had a delivery of.
REPLAY_NAMESPACE = uuid.UUID("6f0c8a52-3b9e-4f57-9d8e-2a4c1b7e5d10")


def replay_event_uuid(event_id: str, installation_id: str) -> uuid.UUID:
    """The eventId of an event replayed to an installation that never had a delivery of it:
    the same for every replay (uuid5 of both ids), so receivers dedup by it."""
    return uuid.uuid5(REPLAY_NAMESPACE, f"{event_id}/{installation_id}")
