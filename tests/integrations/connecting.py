"""Connecting a ``button`` property the only way there is: a member presses Connect (a state
issued to them) and the integration completes the flow with that state."""

from integrations.models import Installation
from integrations.services.oauth import oauth_connect_complete, oauth_connect_start


def connect(installation: Installation, *, member, property_name: str, credentials: dict):
    start = oauth_connect_start(user=member, installation=installation, property_name=property_name)
    return oauth_connect_complete(
        installation=installation, state=start.state, configuration={property_name: credentials}
    )
