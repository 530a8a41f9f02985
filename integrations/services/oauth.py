"""Connecting a ``button`` property with OAuth: a flow bound to the admin who started it.

- An admin of the installation's organization (connecting configures it) presses Connect
  (marketplace or API): ``oauth_connect_start`` issues a ``state`` to them, for that
  installation and
  property (signed, expiring, single-use), and the URL that starts the flow: the property's
  ``callback_url`` on the installation's public endpoint, with ``?state=``.
- The integration's handler (the SDK's ``create_oauth_handler``) starts only from such a
  state and checks it with its installation token (``oauth_state_check``) before sending the
  browser to the provider, and again on the way back before exchanging the code.
- ``oauth_connect_complete`` consumes the state and writes the credentials with the
  installation's token, through the setup flow: the only way a ``button`` property is
  written. The consumed state records who connected the property, and when.
- ``oauth_disconnect``: an admin removes the credentials (the setup flow runs too).
"""

import secrets
from dataclasses import dataclass
from datetime import datetime, timedelta
from urllib.parse import urlencode

from django.conf import settings
from django.core import signing
from django.core.exceptions import ValidationError
from django.db import transaction
from django.utils import timezone

from docplatform.access import Action

from .. import configuration as config_rules
from ..environment import installation_public_endpoint
from ..models import Installation, OAuthState
from ..policies import act_check, configuration_definition, may_act
from .installations import installation_configure

SALT = "integrations.oauth-state"


@dataclass(frozen=True)
class ConnectStart:
    """What pressing Connect gives: the state, and the URL that starts the flow with it."""

    state: str
    url: str
    expires_at: datetime


def _button(installation: Installation, property_name: str) -> dict:
    """The definition of ``property_name``, a button property of the installation's
    configuration; anything else is refused naming ``property``."""
    definition = configuration_definition(installation)
    if property_name not in config_rules.button_properties(definition):
        buttons = ", ".join(sorted(config_rules.button_properties(definition))) or "none"
        raise ValidationError(
            {"property": [f"not a button property of this installation (those are: {buttons})"]}
        )
    return config_rules.properties_of(definition)[property_name]


def oauth_connect_start(*, user, installation: Installation, property_name: str) -> ConnectStart:
    """Connect pressed by ``user``, an admin of the installation's organization."""
    act_check(user, Action.CONFIGURE, installation)
    button = _button(installation, property_name)
    nonce = secrets.token_urlsafe(24)
    expires_at = timezone.now() + timedelta(seconds=settings.OAUTH_STATE_MAX_AGE)
    OAuthState.objects.create(
        nonce=nonce,
        installation=installation,
        property_name=property_name,
        issued_to=user,
        expires_at=expires_at,
    )
    state = signing.dumps({"i": installation.pk, "n": nonce}, salt=SALT, compress=True)
    url = installation_public_endpoint(installation) + button["callback_url"]
    separator = "&" if "?" in url else "?"
    return ConnectStart(state, f"{url}{separator}{urlencode({'state': state})}", expires_at)


def _refused(reason: str) -> ValidationError:
    return ValidationError({"state": [reason]})


def _issued_state(installation: Installation, state: str, *, lock: bool = False) -> OAuthState:
    """The live state row a state string names, for this installation; forged, expired,
    used or another installation's states, and those issued to someone who may no longer
    configure the installation, are refused on ``state``."""
    try:
        data = signing.loads(state, salt=SALT, max_age=settings.OAUTH_STATE_MAX_AGE)
    except signing.SignatureExpired:
        raise _refused("the state has expired; start the connection again") from None
    except (signing.BadSignature, ValueError, TypeError):
        raise _refused("the state is not one the platform issued") from None
    if not isinstance(data, dict) or not isinstance(data.get("n"), str):
        raise _refused("the state is not one the platform issued")
    if data.get("i") != installation.pk:
        raise _refused("the state belongs to another installation")
    rows = OAuthState.objects.filter(nonce=data["n"], installation=installation)
    row = (rows.select_for_update(no_key=True) if lock else rows).first()
    if row is None or row.issued_to_id is None:
        raise _refused("the state is not one the platform issued to a member")
    if not may_act(row.issued_to, Action.CONFIGURE, installation):
        raise _refused("the state was issued to someone who may no longer configure it")
    if row.consumed_at is not None:
        raise _refused("the state was already used; start the connection again")
    if row.expires_at <= timezone.now():
        raise _refused("the state has expired; start the connection again")
    return row


def oauth_state_check(*, installation: Installation, state: str) -> str:
    """Whether a flow may go on with ``state`` (nothing is written): its property name."""
    return _issued_state(installation, state).property_name


@transaction.atomic
def oauth_connect_complete(
    *, user, installation: Installation, state: str, configuration: dict, external_ids=None
) -> Installation:
    """The end of the flow: use up the state and write the connected property's credentials
    (with any other configuration values and external ids the integration gives along);
    ``user``, who writes them, is the installation's token."""
    act_check(user, Action.CONFIGURE, installation)
    row = _issued_state(installation, state, lock=True)
    name = row.property_name
    if not isinstance(configuration, dict) or configuration.get(name) is None:
        raise ValidationError({f"configuration.{name}": ["give the connected credentials"]})
    row.consumed_at = timezone.now()
    row.save(update_fields=["consumed_at"])
    return installation_configure(
        user=user,
        installation=installation,
        changes=configuration,
        external_ids=external_ids,
        oauth_property=name,
    )


@transaction.atomic
def oauth_disconnect(*, user, installation: Installation, property_name: str) -> Installation:
    """An admin removes a connected property's credentials; ``installation_setup`` fires."""
    act_check(user, Action.CONFIGURE, installation)
    _button(installation, property_name)
    if property_name not in (installation.credentials or {}):
        raise ValidationError({"property": ["is not connected"]})
    return installation_configure(
        user=user,
        installation=installation,
        changes={property_name: None},
        oauth_property=property_name,
    )
