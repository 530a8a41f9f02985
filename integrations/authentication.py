"""The tokens given to integration code (in the runtime envelope) for the REST API:
installation tokens (``dpi_…``) and integration tokens (``dpn_…``).

An installation token authenticates as an ``InstallationPrincipal``, the host's machine
principal (``docplatform.principals``): ``request.user`` is that principal (not a Django user)
and ``request.auth`` the installation. What it may reach is the installation's policies'
answer: the scopes its organization granted, the spaces and sites they cover.

An integration token (``IntegrationVersion.api_token``, ``environment.apiTokens.integration``)
authenticates as an ``IntegrationPrincipal``: the integration itself, acting on every
installation of it (none paused), each within that installation's granted scopes and reach,
and nothing else: an organization with no installation of it does not exist for it.
``request.auth`` is the version whose token it is. **One rule for both**: a machine principal
``has_scope`` when it acts with the scope at all (an integration token: when some
installation of it was granted it), and once the permission (``IsPersonOrScopedInstallation``)
knows the scope a request uses, the principal is narrowed to it (``within``): its ``spaces``
and ``sites`` are then what the installations holding that scope reach. An installation
token's narrowing changes nothing (its one installation holds the scope, or it was refused).
"""

from dataclasses import dataclass, replace
from functools import cached_property

from drf_spectacular.extensions import OpenApiAuthenticationExtension
from rest_framework import authentication, exceptions
from rest_framework.permissions import BasePermission

from docplatform.models import Organization, Site, Space

from .models import Installation, Integration, IntegrationVersion
from .policies import installation_has_scope, scopes_awaiting_approval
from .selectors import (
    installation_by_api_token,
    integration_installations,
    integration_version_by_api_token,
    sites_reachable_by,
    spaces_reachable_by,
)


class _CodePrincipal:
    """What Django and DRF ask of any caller, answered for integration code (not a person);
    ``pk`` is distinct from every user's, so throttles count each caller on its own."""

    is_machine = True
    is_authenticated = True
    is_anonymous = False
    is_active = True

    def get_username(self) -> str:
        return self.pk


@dataclass(frozen=True)
class InstallationPrincipal(_CodePrincipal):
    """The caller behind an installation token: the installation's code, not a person."""

    installation: Installation

    @property
    def pk(self) -> str:
        return f"installation:{self.installation.pk}"

    @property
    def actor_id(self) -> str:
        return self.installation.pk

    @property
    def actor_label(self) -> str:
        return f"{self.installation.integration.title} (installation {self.installation.pk})"

    def has_scope(self, scope: str) -> bool:
        return installation_has_scope(self.installation, scope)

    def scope_refusal(self, scope: str) -> str:
        message = f"The installation does not have the scope {scope}."
        if scope in scopes_awaiting_approval(self.installation):
            message += " It awaits an admin's approval."
        return message

    def within(self, scope: str) -> "InstallationPrincipal":
        return self

    def spaces(self):
        return spaces_reachable_by(self.installation)

    def sites(self):
        return sites_reachable_by(self.installation)

    def installation_in(self, organization_id: str) -> str | None:
        if self.installation.organization_id == organization_id:
            return self.installation.pk
        return None

    def organizations(self):
        """The installation's organization, whatever its level."""
        return Organization.objects.filter(pk=self.installation.organization_id)


@dataclass(frozen=True)
class IntegrationPrincipal(_CodePrincipal):
    """The caller behind an integration token: the integration's code acting for the
    integration itself, on its installations (see the module's docstring). ``scope``: the
    scope the request uses, once the permission named it (``within``)."""

    integration: Integration
    version: IntegrationVersion
    scope: str | None = None

    @property
    def pk(self) -> str:
        return f"integration:{self.integration.pk}"

    @property
    def actor_id(self) -> str:
        return self.integration.pk

    @property
    def actor_label(self) -> str:
        return f"{self.integration.title} (integration token)"

    @cached_property
    def _installations(self) -> list[Installation]:
        return integration_installations(self.integration)

    def installations(self) -> list[Installation]:
        """Its integration's installations, in every organization, none paused (read once
        per request: the principal narrowed by ``within`` keeps them)."""
        return self._installations

    def _holding(self, scope: str | None) -> list[Installation]:
        """Its installations holding ``scope`` (none when no scope is named yet)."""
        if scope is None:
            return []
        return [i for i in self.installations() if installation_has_scope(i, scope)]

    def has_scope(self, scope: str) -> bool:
        return bool(self._holding(scope))

    def scope_refusal(self, scope: str) -> str:
        return f"No installation of {self.integration.name} has the scope {scope}."

    def within(self, scope: str) -> "IntegrationPrincipal":
        narrowed = replace(self, scope=scope)
        if "_installations" in self.__dict__:  # read already: not again for the same request
            narrowed.__dict__["_installations"] = self._installations
        return narrowed

    def spaces(self):
        """The spaces its installations holding the request's scope reach (none before the
        scope is known)."""
        holding = self._holding(self.scope)
        spaces = Space.objects.none()
        for installation in holding:
            spaces |= spaces_reachable_by(installation)
        return Space.objects.filter(pk__in=spaces.values("pk"))

    def sites(self):
        holding = self._holding(self.scope)
        sites = Site.objects.none()
        for installation in holding:
            sites |= sites_reachable_by(installation)
        return Site.objects.filter(pk__in=sites.values("pk"))

    def installation_in(self, organization_id: str) -> str | None:
        """Its installation in the organization holding the request's scope (what it posts
        there belongs to that installation), else None."""
        holding = self._holding(self.scope)
        at_organization = [i for i in holding if i.organization_id == organization_id]
        return at_organization[0].pk if at_organization else None

    def organizations(self):
        """The organizations of its installations holding the request's scope."""
        holding = self._holding(self.scope)
        return Organization.objects.filter(pk__in={i.organization_id for i in holding})


def is_installation(user) -> bool:
    return isinstance(user, InstallationPrincipal)


def is_integration(user) -> bool:
    return isinstance(user, IntegrationPrincipal)


class InstallationTokenAuthentication(authentication.BaseAuthentication):
    """``Authorization: Bearer dpi_…`` (an installation token) or ``Bearer dpn_…`` (an
    integration token); any other header is left to the next authenticator."""

    keyword = "Bearer"

    def authenticate(self, request):
        header = authentication.get_authorization_header(request).split()
        if len(header) != 2 or header[0].lower() != self.keyword.lower().encode():
            return None
        raw = header[1]
        if raw.startswith(IntegrationVersion.TOKEN_PREFIX.encode()):
            version = integration_version_by_api_token(raw.decode(errors="replace"))
            if version is None:
                raise exceptions.AuthenticationFailed(
                    "Authorization: unknown integration token, or its version no longer runs."
                )
            return IntegrationPrincipal(version.integration, version), version
        if not raw.startswith(Installation.TOKEN_PREFIX.encode()):
            return None
        installation = installation_by_api_token(raw.decode(errors="replace"))
        if installation is None:
            raise exceptions.AuthenticationFailed(
                "Authorization: unknown installation token, or the installation is paused."
            )
        return InstallationPrincipal(installation), installation

    def authenticate_header(self, request):
        return self.keyword


class IsInstallation(BasePermission):
    """An installation token only (the installation's own endpoints)."""

    message = "Only an installation token can call this endpoint."

    def has_permission(self, request, view):
        return is_installation(request.user)


class IsIntegration(BasePermission):
    """An integration token only (the integration's own endpoints)."""

    message = "Only an integration token can call this endpoint."

    def has_permission(self, request, view):
        return is_integration(request.user)


class InstallationTokenScheme(OpenApiAuthenticationExtension):
    target_class = InstallationTokenAuthentication
    name = "installationToken"

    def get_security_definition(self, auto_schema):
        return {
            "type": "http",
            "scheme": "bearer",
            "description": "An installation token (dpi_…) or an integration token (dpn_…), "
            "given to integration code.",
        }
