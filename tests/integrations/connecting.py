"""Connecting a ``button`` property the only way there is: an admin presses Connect (a state
issued to them) and the integration completes the flow with that state and its installation
token."""

from integrations.authentication import InstallationPrincipal
from integrations.models import Installation
from integrations.services.oauth import oauth_connect_complete, oauth_connect_start


def connect(installation: Installation, *, member, property_name: str, credentials: dict):
    start = oauth_connect_start(user=member, installation=installation, property_name=property_name)
    return oauth_connect_complete(
        user=InstallationPrincipal(installation),
        installation=installation,
        state=start.state,
        configuration={property_name: credentials},
    )
