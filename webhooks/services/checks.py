"""The checks before the webhook controls people use (REST API, marketplace, Django admin):
the installation sends webhooks, it receives now, its endpoint is enabled.

Who may act is the roles' table (``integrations.policies.act_check``): everything about an
endpoint (its URL, its signing secret and rotation, its deliveries, redelivery, pings,
replays, its state) is for the installing organization's admins, and operators at their
doors. Callers have already found the installation among the user's own.
"""

from django.core.exceptions import ValidationError

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
