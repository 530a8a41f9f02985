"""``Authorization: Bearer <token>`` for the REST API: personal tokens.

A personal token (``dpt_…``) acts as its user while it is neither revoked nor expired
(``request.auth`` is the ``ApiToken``). Plug-in apps authenticate their own tokens before
this one (``integrations.authentication``: installation tokens) and put a machine principal
in ``request.user`` (``docplatform.principals``); a bearer token none of them took is refused
here.
"""

from drf_spectacular.extensions import OpenApiAuthenticationExtension
from rest_framework import authentication, exceptions

from .selectors import api_token_working


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
            "description": "A personal token (dpt_…).",
        }
