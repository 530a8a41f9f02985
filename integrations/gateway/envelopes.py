"""The events of the envelopes the platform sends (DESIGN.md, "The envelope protocol"): one
builder for each kind, so every caller sends the same shape."""

import uuid

from docplatform import events

from ..environment import installation_public_endpoint
from ..models import Installation


def fetch_event(method: str, url: str, headers: dict) -> dict:
    """A request to the integration's ``fetch``: ``url`` is the world-facing one."""
    return {
        "type": "fetch",
        "eventId": str(uuid.uuid4()),
        "request": {"method": method, "url": url, "headers": headers},
    }


def completion_event(installation: Installation, path: str) -> dict:
    """``GET {installation publicEndpoint}{completion_url}``, asking for options."""
    return fetch_event(
        "GET", installation_public_endpoint(installation) + path, {"Accept": "application/json"}
    )


def platform_event(delivery) -> dict:
    """A platform event (``space_content_updated``, ...) as one installation receives it."""
    return events.payload_for(delivery.event, delivery)


def ui_render_event(
    installation: Installation,
    *,
    component_id: str,
    props: dict,
    state: dict | None,
    action: dict | None,
    context: dict,
) -> dict:
    """Render (after dispatching ``action``) one component instance."""
    return {
        "type": "ui_render",
        "eventId": str(uuid.uuid4()),
        "installationId": installation.pk,
        "componentId": component_id,
        "props": props,
        "state": state,
        "action": action,
        "context": context,
    }


def visitor_authentication_event(
    installation: Installation, *, location: str, method: str, url: str, headers: dict
) -> dict:
    """A visitor of the installation's site asks to sign in, to come back to ``location``
    (an address of the site): the request they sent, as a ``fetch`` carries it."""
    return {
        "type": "visitor_authentication",
        "eventId": str(uuid.uuid4()),
        "installationId": installation.pk,
        "siteId": installation.site_id,
        "location": location,
        "request": {"method": method, "url": url, "headers": headers},
    }


def visitor_claims_event(installation: Installation, claims: dict) -> dict:
    """A visitor's session starts on the installation's site with the token's ``claims``."""
    return {
        "type": "visitor_claims",
        "eventId": str(uuid.uuid4()),
        "installationId": installation.pk,
        "siteId": installation.site_id,
        "claims": claims,
    }
