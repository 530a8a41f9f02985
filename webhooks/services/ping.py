"""The test ping: ``{"type": "ping", "eventId", "installationId"}`` to one installation's URL,
through the outbox like any event (the installing organization's admins, or an operator,
send one)."""

from django.db import transaction

from docplatform import events
from docplatform.access import Action
from docplatform.events.models import Delivery
from integrations.models import Installation
from integrations.policies import act_check

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


def webhook_ping_send(*, user, installation: Installation) -> Delivery:
    """Queue a test ping to the installation's URL; the ping's delivery."""
    act_check(user, Action.PING, installation)
    webhook_installation_check(installation)
    webhook_receiving_check(installation)
    with transaction.atomic():
        event = webhook_ping(installation=installation)
        return event.deliveries.select_related("event").get()
