"""Sending a delivery to an installation again, for whoever may (the REST API, the
marketplace's delivery pages, the admin, the ``webhooks`` command): the outbox's
``delivery_redeliver`` behind the roles' rule (admins of the installing organization, or an
operator)."""

from docplatform.access import Action
from docplatform.events.leases import delivery_redeliver
from docplatform.events.models import Delivery

from ..policies import act_check


def installation_delivery_redeliver(*, user, delivery: Delivery) -> Delivery:
    """Send a finished delivery again: the same eventId, a new chain of attempts."""
    act_check(user, Action.REDELIVER, delivery.installation)
    return delivery_redeliver(delivery)
