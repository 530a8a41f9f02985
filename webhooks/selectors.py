"""Reads of the webhook integration: which installations send webhooks, and the state of their
signing secrets."""

from django.db.models import QuerySet
from django.utils import timezone

from integrations.models import Installation
from integrations.policies import acts_at_level

from .models import SigningSecret
from .services.publication import WEBHOOK_INTEGRATION


def is_webhook_installation(installation: Installation) -> bool:
    """A space or site installation of the webhook integration: the ones that send webhooks
    (the levels it registered with ``policies.register_acting_levels``)."""
    return installation.integration.name == WEBHOOK_INTEGRATION and acts_at_level(installation)[0]


def signing_secrets_in_overlap(installation: Installation) -> QuerySet:
    """The rotated-out secrets that still sign (their 24-hour overlap runs), newest first."""
    return SigningSecret.objects.filter(
        installation=installation, expires_at__gt=timezone.now()
    ).order_by("-expires_at")
