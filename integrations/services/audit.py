"""The audit rows of what people, operators and installation tokens do to installations
(DESIGN.md, "Teams and roles": every change of who may do what, and every change an
integration makes, is one row), written by the services in the change's transaction.

Details name what changed, never a value of a property but an endpoint's address: a built-in
integration whose configuration holds where its events go (the webhook integration's ``url``)
registers that property here, and a change of it is its own action with where it pointed
before and after.
"""

from docplatform.audit.services import audit_record

from ..models import Installation
from ..operators import acting

#: integration name -> (the property holding its endpoint, the action of changing it)
_ENDPOINT_PROPERTIES: dict[str, tuple[str, str]] = {}


def register_endpoint_property(integration_name: str, property_name: str, action: str) -> None:
    """Audit a change of ``property_name`` of ``integration_name``'s installations as
    ``action``, with its value before and after (an address, not a secret)."""
    _ENDPOINT_PROPERTIES[integration_name] = (property_name, action)


def installation_audit(*, action: str, user, installation: Installation, details=None) -> None:
    """One row: ``user`` (a person, an installation's token, an operator) did ``action``."""
    audit_record(action=action, actor=acting(user), target=installation, details=details)


def installation_configured_audit(
    *, user, installation: Installation, before: dict, changed: list[str], **details
) -> None:
    """``installation.configured`` naming the ``changed`` properties (and ``details``), or
    the integration's endpoint action when its endpoint property is among them."""
    endpoint = _ENDPOINT_PROPERTIES.get(installation.integration.name)
    if endpoint is not None and endpoint[0] in changed:
        name, action = endpoint
        others = [other for other in changed if other != name]
        after = installation.configuration.get(name)
        details = {"from": before.get(name), "to": after, "properties": others, **details}
    else:
        action, details = "installation.configured", {"properties": changed, **details}
    installation_audit(action=action, user=user, installation=installation, details=details)
