"""Installation tokens (``dpi_…``, given to the integration runtime) for the REST API.

An installation token authenticates as an ``InstallationPrincipal``, the host's machine
principal (``docplatform.principals``): ``request.user`` is that principal (not a Django user)
and ``request.auth`` the installation. What it may reach is the installation's policies'
answer: the scopes its organization granted, the spaces and sites they cover.
"""

from dataclasses import dataclass

from drf_spectacular.extensions import OpenApiAuthenticationExtension
from rest_framework import authentication, exceptions
from rest_framework.permissions import BasePermission

from docplatform.models import Organization

from .models import Installation
from .policies import installation_has_scope, scopes_awaiting_approval
from .selectors import installation_by_api_token, sites_reachable_by, spaces_reachable_by


@dataclass(frozen=True)
class InstallationPrincipal:
    """The caller behind an installation token: the installation's code, not a person."""

    installation: Installation
    is_machine = True
    is_authenticated = True
    is_anonymous = False
    is_active = True

    @property
    def pk(self) -> str:
        """Distinct from every user's pk, so throttles count installations on their own."""
        return f"installation:{self.installation.pk}"

    def get_username(self) -> str:
        return self.pk

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


def is_installation(user) -> bool:
    return isinstance(user, InstallationPrincipal)


class InstallationTokenAuthentication(authentication.BaseAuthentication):
    """``Authorization: Bearer dpi_…``; any other header is left to the next authenticator."""

    keyword = "Bearer"

    def authenticate(self, request):
        header = authentication.get_authorization_header(request).split()
        if len(header) != 2 or header[0].lower() != self.keyword.lower().encode():
            return None
        if not header[1].startswith(Installation.TOKEN_PREFIX.encode()):
            return None
        installation = installation_by_api_token(header[1].decode(errors="replace"))
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


class InstallationTokenScheme(OpenApiAuthenticationExtension):
    target_class = InstallationTokenAuthentication
    name = "installationToken"

    def get_security_definition(self, auto_schema):
        return {
            "type": "http",
            "scheme": "bearer",
            "description": "An installation token (dpi_…), given to integration code.",
        }
