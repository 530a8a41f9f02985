"""The webhook controls people use (REST API, marketplace, Django admin): a test ping and the
signing secret, with the checks ``services`` leaves to its callers.

Who may act: any member of the installing organization pings; only its admins read or rotate
the signing secret. Callers have already found the installation among the user's own.
"""

from django.core.exceptions import PermissionDenied, ValidationError
from django.db import transaction

from docplatform.events.models import Delivery
from docplatform.selectors import is_organization_admin
from integrations.models import Installation
from integrations.policies import effective_status, is_receiving

from .selectors import is_webhook_installation
from .services.delivery import webhook_ping
from .services.signing_secrets import signing_secret_current, signing_secret_rotate


def webhook_installation_check(installation: Installation) -> None:
    """Refuse an installation that sends no webhooks (another integration, or the webhook
    integration's organization installation)."""
    if not is_webhook_installation(installation):
        raise ValidationError({"installation": ["not a webhook installation in a space or a site"]})


def _not_receiving_reason(installation: Installation) -> str:
    shown = effective_status(installation)
    if shown.reasons and shown.reasons[0]["path"] == "parent":
        return shown.reasons[0]["message"]
    if shown.status == Installation.Status.PAUSED:
        return "the installation is paused"
    return "the installation is pending until its configuration is complete"


def webhook_ping_send(*, installation: Installation) -> Delivery:
    """Queue a test ping to the installation's URL; the ping's delivery."""
    webhook_installation_check(installation)
    if not is_receiving(installation):
        raise ValidationError({"status": [_not_receiving_reason(installation)]})
    with transaction.atomic():
        event = webhook_ping(installation=installation)
        return event.deliveries.select_related("event").get()


def _admin_check(user, installation: Installation) -> None:
    if not is_organization_admin(user=user, organization=installation.organization):
        raise PermissionDenied("only the organization's admins see and rotate the signing secret")


def webhook_secret_read(*, user, installation: Installation) -> str:
    """The current signing secret, for an admin of the installing organization."""
    _admin_check(user, installation)
    webhook_installation_check(installation)
    return signing_secret_current(installation)


def webhook_secret_rotate(*, user, installation: Installation) -> str:
    """A new signing secret, for an admin; the old one keeps signing for 24 hours."""
    _admin_check(user, installation)
    webhook_installation_check(installation)
    return signing_secret_rotate(installation)
