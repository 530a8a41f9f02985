"""The scopes an installation acts with (DESIGN.md, "new version asks for more scopes").

An installation keeps the scopes its organization granted (``Installation.granted_scopes``):
every scope its integration asked for when it was installed, and what an admin of the
organization approved since. Its integration's latest version asks for ``Integration.scopes``.
The installation acts with the scopes both grant: a version asking for more runs with the
granted ones until an admin approves the new ones; a version asking for fewer narrows the
installation at once. ``effective_scopes`` is that rule, and every check of a scope (an
installation token's API access, which installations an event goes to) goes through it.
"""

from collections.abc import Iterable

from .models import Installation


def effective_scopes(*, granted: Iterable[str], asked: Iterable[str]) -> list[str]:
    """The scopes an installation acts with: those its integration asks for (in the
    manifest's order) that its organization granted."""
    granted = set(granted or ())
    return [scope for scope in asked or () if scope in granted]


def installation_scopes(installation: Installation) -> list[str]:
    """The scopes ``installation`` acts with now."""
    return effective_scopes(
        granted=installation.granted_scopes, asked=installation.integration.scopes
    )


def installation_has_scope(installation: Installation, scope: str) -> bool:
    return scope in installation_scopes(installation)


def scopes_awaiting_approval(installation: Installation) -> list[str]:
    """The scopes the integration asks for that the organization has not granted yet."""
    granted = set(installation.granted_scopes or ())
    return [scope for scope in installation.integration.scopes if scope not in granted]


def new_permissions_notice(installation: Installation) -> str | None:
    """What the marketplace, the API and the admin show while new scopes await approval."""
    waiting = scopes_awaiting_approval(installation)
    return f"asks for new permissions: {', '.join(waiting)}" if waiting else None


def scopes_granted_at_install(installation: Installation) -> list[str]:
    """Installing grants what the integration asks for; a space or site installation under
    an organization installation gets what the organization installation holds, so
    installing into a space never grants what still awaits an admin's approval."""
    if installation.parent is not None:
        return installation_scopes(installation.parent)
    return list(installation.integration.scopes)
