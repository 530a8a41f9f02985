"""Who signs a site's visitors in, through a provider the integrations' side registers (the
host imports no plug-in app, as with ``reading.blocks``): which of a site's installations
may (scope ``site:visitor:auth``), where a visitor without a session is sent, and the claims
the site's ``site:adaptive:write`` installations add when a session starts.

``sites.visitor_sessions`` and the site's settings (page and API) ask this module alone.
"""

from typing import Protocol

from ..models import Site


class VisitorAuthProvider(Protocol):
    def choices(self, site: Site) -> list[tuple[str, str]]:
        """The site's installations that may sign its visitors in: ``(id, title)``."""

    def installation_problem(self, site: Site, installation_id: str) -> str | None:
        """Why ``installation_id`` cannot sign the site's visitors in, or None."""

    def sign_in_url(self, site: Site, location: str) -> str | None:
        """Where a visitor without a session goes to sign in and come back to ``location``
        (an address of the site); None when nobody can sign them in now (the installation
        is gone, paused, or lost the scope)."""

    def claims_added(self, site: Site, claims: dict) -> dict:
        """The claims of a session starting with the token's ``claims``, with those the
        site's ``site:adaptive:write`` installations add (under a deadline; one that fails
        adds nothing)."""


class _NobodySignsIn:
    """Where no provider is registered: no installation can sign visitors in."""

    def choices(self, site):
        return []

    def installation_problem(self, site, installation_id):
        return "no integration can sign visitors in on this platform"

    def sign_in_url(self, site, location):
        return None

    def claims_added(self, site, claims):
        return dict(claims)


_provider: list[VisitorAuthProvider] = [_NobodySignsIn()]


def register_visitor_auth(provider: VisitorAuthProvider) -> None:
    _provider[0] = provider


def visitor_auth() -> VisitorAuthProvider:
    return _provider[0]
