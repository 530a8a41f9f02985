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

from .selectors import is_endpoint_disabled, is_webhook_installation
from .services.delivery import webhook_ping
from .services.signatures import secret_shown
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


def webhook_receiving_check(installation: Installation) -> None:
    """Refuse to send to an installation that receives nothing now: paused, pending, or its
    endpoint disabled (re-enabled first)."""
    if not is_receiving(installation):
        raise ValidationError({"status": [_not_receiving_reason(installation)]})
    if is_endpoint_disabled(installation.pk):
        raise ValidationError(
            {
                "endpoint": [
                    "the endpoint is disabled after failing every attempt: re-enable it first"
                ]
            }
        )


def webhook_ping_send(*, installation: Installation) -> Delivery:
    """Queue a test ping to the installation's URL; the ping's delivery."""
    webhook_installation_check(installation)
    webhook_receiving_check(installation)
    with transaction.atomic():
        event = webhook_ping(installation=installation)
        return event.deliveries.select_related("event").get()


def webhook_admin_check(
    user, installation: Installation, action="see and rotate the signing secret"
) -> None:
    """Refuse anyone but an admin of the installing organization (the webhook controls'
    rule: the signing secret, the delivery log and its actions, the endpoint's state)."""
    if not is_organization_admin(user=user, organization=installation.organization):
        raise PermissionDenied(f"only the organization's admins {action}")


def webhook_secret_read(*, user, installation: Installation) -> str:
    """The current signing secret, for an admin of the installing organization, in the form
    its endpoint's signature scheme takes (``signatures.secret_shown``)."""
    webhook_admin_check(user, installation)
    webhook_installation_check(installation)
    return secret_shown(installation.configuration, signing_secret_current(installation))


def webhook_secret_rotate(*, user, installation: Installation) -> str:
    """A new signing secret, for an admin, shown as ``webhook_secret_read`` shows it; the old
    one keeps signing for 24 hours."""
    webhook_admin_check(user, installation)
    webhook_installation_check(installation)
    return secret_shown(installation.configuration, signing_secret_rotate(installation))
