"""The checks before the webhook controls people use (REST API, marketplace, Django admin):
the installation sends webhooks, it receives now, its endpoint is enabled, and who may act.

Who may act: any member of the installing organization pings (``ping``); only its admins read
or rotate the signing secret (``signing_secrets``), and see and act on the delivery log and the
endpoint's state. Callers have already found the installation among the user's own.
"""

from django.core.exceptions import PermissionDenied, ValidationError

from docplatform import access
from integrations.models import Installation
from integrations.policies import not_receiving_reason

from ..selectors import is_endpoint_disabled, is_webhook_installation


def webhook_installation_check(installation: Installation) -> None:
    """Refuse an installation that sends no webhooks (another integration, or the webhook
    integration's organization installation)."""
    if not is_webhook_installation(installation):
        raise ValidationError({"installation": ["not a webhook installation in a space or a site"]})


def webhook_receiving_check(installation: Installation) -> None:
    """Refuse to send to an installation that receives nothing now: paused, pending
    (``policies.not_receiving_reason``), or its endpoint disabled (re-enabled first)."""
    reason = not_receiving_reason(installation)
    if reason is not None:
        raise ValidationError({"status": [reason]})
    webhook_endpoint_enabled_check(installation)


def webhook_endpoint_enabled_check(installation: Installation) -> None:
    if is_endpoint_disabled(installation.pk):
        raise ValidationError(
            {
                "endpoint": [
                    "the endpoint is disabled after failing every attempt: re-enable it first"
                ]
            }
        )


def webhook_admin_check(
    user, installation: Installation, action="see and rotate the signing secret"
) -> None:
    """Refuse anyone but an admin of the installing organization (the webhook controls'
    rule: the signing secret, the delivery log and its actions, the endpoint's state)."""
    if not access.may(user, access.Action.READ_LOGS, installation):
        raise PermissionDenied(f"only the organization's admins {action}")
