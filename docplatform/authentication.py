"""``Authorization: Bearer <token>`` for the REST API.

A personal token (``dpt_…``) acts as its user while it is neither revoked nor expired
(``request.auth`` is the ``ApiToken``). An installation token (``dpi_…``, given to the
integration runtime) authenticates as an ``InstallationPrincipal``: ``request.user`` is that
principal (not a Django user) and ``request.auth`` the installation.
"""

from dataclasses import dataclass

from drf_spectacular.extensions import OpenApiAuthenticationExtension
from rest_framework import authentication, exceptions

from integrations.models import Installation
from integrations.selectors import installation_by_api_token

from .selectors import api_token_working


@dataclass(frozen=True)
class InstallationPrincipal:
    """The caller behind an installation token: the installation's code, not a person."""

    installation: Installation
    is_authenticated = True
    is_anonymous = False
    is_active = True

    @property
    def pk(self) -> str:
        """Distinct from every user's pk, so throttles count installations on their own."""
        return f"installation:{self.installation.pk}"

    def get_username(self) -> str:
        return self.pk


def is_installation(user) -> bool:
    return isinstance(user, InstallationPrincipal)


class BearerTokenAuthentication(authentication.BaseAuthentication):
    keyword = "Bearer"

    def authenticate(self, request):
        header = authentication.get_authorization_header(request).split()
        if not header or header[0].lower() != self.keyword.lower().encode():
            return None
        if len(header) != 2:
            raise exceptions.AuthenticationFailed("Authorization: give exactly 'Bearer <token>'.")
        try:
            raw = header[1].decode()
        except UnicodeDecodeError as exc:
            raise exceptions.AuthenticationFailed("Authorization: the token is not text.") from exc
        if raw.startswith(Installation.TOKEN_PREFIX):
            installation = installation_by_api_token(raw)
            if installation is None:
                raise exceptions.AuthenticationFailed(
                    "Authorization: unknown installation token, or the installation is paused."
                )
            return InstallationPrincipal(installation), installation
        token = api_token_working(raw)
        if token is None:
            raise exceptions.AuthenticationFailed(
                "Authorization: unknown, revoked or expired token."
            )
        return token.user, token

    def authenticate_header(self, request):
        return self.keyword


class BearerTokenScheme(OpenApiAuthenticationExtension):
    target_class = BearerTokenAuthentication
    name = "bearerToken"

    def get_security_definition(self, auto_schema):
        return {
            "type": "http",
            "scheme": "bearer",
            "description": "A personal token (dpt_…) or an installation token (dpi_…).",
        }
