"""OAuth ``state`` for integrations' OAuth flows: signed, expiring, single-use, bound to the
installation that asked for it (the SDK's ``create_oauth_handler`` calls these through the
API with the installation's token)."""

import secrets
from datetime import timedelta

from django.conf import settings
from django.core import signing
from django.core.exceptions import ValidationError
from django.utils import timezone

from .. import configuration as config_rules
from ..models import Installation, OAuthState

SALT = "integrations.oauth-state"


def _button_properties(installation: Installation) -> set[str]:
    definition = config_rules.definition_for(
        installation.integration.configurations, installation.configuration_level
    )
    return config_rules.button_properties(definition)


def oauth_state_issue(*, installation: Installation, property_name: str) -> str:
    """A new state for connecting ``property_name`` (a ``button`` property) of the installation."""
    if property_name not in _button_properties(installation):
        raise ValidationError({"property": ["not a button property of this installation"]})
    nonce = secrets.token_urlsafe(24)
    OAuthState.objects.create(
        nonce=nonce,
        installation=installation,
        property_name=property_name,
        expires_at=timezone.now() + timedelta(seconds=settings.OAUTH_STATE_MAX_AGE),
    )
    return signing.dumps({"i": installation.pk, "n": nonce}, salt=SALT, compress=True)


def oauth_state_consume(*, installation: Installation, state: str) -> str:
    """Check and use up a state; returns its property name. Forged, expired, replayed or
    another installation's states raise ValidationError on ``state``."""

    def refused(reason):
        return ValidationError({"state": [reason]})

    try:
        data = signing.loads(state, salt=SALT, max_age=settings.OAUTH_STATE_MAX_AGE)
    except signing.SignatureExpired:
        raise refused("the state has expired; start the connection again") from None
    except (signing.BadSignature, ValueError, TypeError):
        raise refused("the state is not one the platform issued") from None
    if not isinstance(data, dict) or data.get("i") != installation.pk:
        raise refused("the state belongs to another installation")
    now = timezone.now()
    used = OAuthState.objects.filter(
        nonce=data.get("n"),
        installation=installation,
        consumed_at__isnull=True,
        expires_at__gt=now,
    ).update(consumed_at=now)
    if not used:
        raise refused("the state was already used or has expired")
    return OAuthState.objects.get(nonce=data["n"]).property_name
