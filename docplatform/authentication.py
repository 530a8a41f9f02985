"""``Authorization: Bearer <token>`` for the REST API."""

from rest_framework import authentication, exceptions

from .selectors import api_token_user


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
        user = api_token_user(raw)
        if user is None:
            raise exceptions.AuthenticationFailed("Authorization: unknown or revoked token.")
        return user, raw

    def authenticate_header(self, request):
        return self.keyword
