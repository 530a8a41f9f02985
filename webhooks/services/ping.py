"""The test ping: ``{"type": "ping", "eventId", "installationId"}`` to one installation's URL,
through the outbox like any event (any member of the installing organization sends one)."""

from django.db import transaction

from docplatform import events
from docplatform.events.models import Delivery
from integrations.models import Installation

from ..rules import PING
from .checks import webhook_installation_check, webhook_receiving_check


def webhook_ping(*, installation: Installation):
    """Send ``{"type": "ping", "eventId", "installationId"}`` to the installation's URL."""
    return events.fire(
        PING,
        organization=installation.organization,
        space=installation.space,
        site=installation.site,
        installation=installation,
    )


def webhook_ping_send(*, installation: Installation) -> Delivery:
    """Queue a test ping to the installation's URL; the ping's delivery."""
    webhook_installation_check(installation)
    webhook_receiving_check(installation)
    with transaction.atomic():
        event = webhook_ping(installation=installation)
        return event.deliveries.select_related("event").get()
