"""``create_oauth_handler``: the OAuth 2 authorization-code flow behind a ``button`` property.

A flow starts only from a ``state`` the platform issued to the member who pressed the
installation's Connect button (signed, bound to the installation, expiring, single-use); the
button opens ``{publicEndpoint}{callback_url}?state=...``. The handler checks the state with
the platform before redirecting and again on the callback; it then exchanges the code
(oauthlib builds and parses the messages, ``context.fetch`` carries them through the runtime
host) and writes the credentials with the installation's token and the state, which the
platform uses up: the only way a ``button`` property is written.
"""

import os
from collections.abc import Callable
from contextlib import contextmanager
from html import escape
from urllib.parse import urlsplit

from oauthlib.oauth2 import OAuth2Error, WebApplicationClient

from .context import Context, FetchError, PlatformAPIError
from .http_messages import Request, Response
from .jsonobject import JSONObject

CHECK_PATH = "/installation/oauth/check"
COMPLETE_PATH = "/installation/oauth/complete"
TOKEN_TIMEOUT = 10
LOOPBACK_HOSTS = {"localhost", "127.0.0.1", "::1"}


class OAuthSetupError(Exception):
    """The handler cannot start a flow: no button property, no public endpoint to return to."""


class CredentialsError(Exception):
    """The token exchange did not yield credentials."""


class TokenResponse(JSONObject):
    """The token endpoint's answer as ``extract_credentials`` gets it: the token fields by key
    (``response["access_token"]``), plus ``ok``, ``status_code``, ``property_name``, ``json()``.
    """

    def __init__(self, fields: dict, status_code: int, ok: bool, property_name: str):
        super().__init__(fields)
        self.status_code, self.ok, self.property_name = status_code, ok, property_name

    def json(self) -> dict:
        return dict(self)


def default_extract_credentials(response: TokenResponse) -> dict:
    """``{"configuration": {<button property>: {access_token, refresh_token, expires_at}}}``."""
    if not response.ok:
        reason = response.get("error_description") or response.get("error") or "no access token"
        raise CredentialsError(f"the token endpoint answered {response.status_code}: {reason}")
    credentials = {key: response.get(key) for key in ("refresh_token", "expires_at")}
    return {
        "configuration": {
            response.property_name: {"access_token": response["access_token"], **credentials}
        }
    }


def button_property(environment) -> str:
    """The first ``button`` property of the configuration this installation uses."""
    configurations = (environment.get("integration") or {}).get("configurations") or {}
    if environment.get("spaceInstallation"):
        preferred = "space" if configurations.get("space") else "site"
    elif environment.get("siteInstallation"):
        preferred = "site"
    else:
        preferred = "account"
    for scope in (preferred, "account", "site", "space"):
        properties = (configurations.get(scope) or {}).get("properties") or {}
        for name, definition in properties.items():
            if isinstance(definition, dict) and definition.get("type") == "button":
                return name
    raise OAuthSetupError(
        "the integration's configurations have no button property: pass property_name="
    )


@contextmanager
def _plain_http_allowed_on_loopback(*urls: str):
    """oauthlib refuses http:// URLs; allow them when every one is on this machine (dev, tests)."""
    plain = [url for url in urls if url.lower().startswith("http:")]
    if not plain or any(urlsplit(url).hostname not in LOOPBACK_HOSTS for url in plain):
        yield
        return
    previous = os.environ.get("OAUTHLIB_INSECURE_TRANSPORT")
    os.environ["OAUTHLIB_INSECURE_TRANSPORT"] = "1"
    try:
        yield
    finally:
        if previous is None:
            del os.environ["OAUTHLIB_INSECURE_TRANSPORT"]
        else:
            os.environ["OAUTHLIB_INSECURE_TRANSPORT"] = previous


def _page(status: int, title: str, message: str) -> Response:
    return Response.html(
        f"<!doctype html><html><head><meta charset='utf-8'><title>{escape(title)}</title>"
        f"</head><body><h1>{escape(title)}</h1><p>{escape(message)}</p></body></html>",
        status,
    )


class OAuthHandler:
    """The OAuth 2 authorization-code flow behind a ``button`` property, as a ``fetch``-style
    handler: the instance is what is mounted (usually at ``/oauth``) and called,
    ``await handler(request, context)``. ``create_oauth_handler`` makes one.

    ``redirect_url`` defaults to the installation's public endpoint plus ``/oauth``;
    ``property_name`` to the first button property of the installation's configuration.
    """

    def __init__(
        self,
        client_id: str,
        client_secret: str,
        authorize_url: str,
        access_token_url: str,
        redirect_url: str | None = None,
        scopes: list[str] | None = None,
        prompt: str | None = None,
        extract_credentials: Callable | None = None,
        property_name: str | None = None,
    ):
        self.client_id, self.client_secret = client_id, client_secret
        self.authorize_url, self.access_token_url = authorize_url, access_token_url
        self.redirect_url, self.scopes, self.prompt = redirect_url, scopes, prompt
        self.extract = extract_credentials or default_extract_credentials
        self.property_name = property_name

    async def __call__(self, request: Request, context: Context) -> Response:
        """Start the flow (no ``code`` yet) or finish it (the provider's callback)."""
        error = request.query.get("error")
        if error == "access_denied":
            return _page(400, "Connection cancelled", "Access was denied at the provider.")
        if error:
            detail = request.query.get("error_description") or error
            return _page(400, "Connection failed", f"The provider refused: {detail}")
        if "code" not in request.query:
            return self.start(request, context)
        return self.finish(request, context)

    def redirect_uri(self, context: Context) -> str:
        if self.redirect_url is not None:
            return self.redirect_url
        endpoint = context.environment.installation_endpoint
        if not endpoint:
            raise OAuthSetupError("no installation public endpoint to redirect back to")
        return endpoint.rstrip("/") + "/oauth"

    def checked_property(self, context: Context, state: str) -> str | Response:
        """The button property the platform issued ``state`` for, or the page refusing it."""
        try:
            name = context.api.post(CHECK_PATH, {"state": state})["property"]
        except PlatformAPIError as error:
            if 400 <= error.status < 500:
                return _page(
                    400,
                    "Connection failed",
                    "This authorization request is invalid, expired or already used. "
                    "Start the connection again.",
                )
            return _page(502, "Connection failed", "The platform could not check the state.")
        except (FetchError, KeyError, TypeError):
            return _page(502, "Connection failed", "The platform could not check the state.")
        if self.property_name is not None and name != self.property_name:
            return _page(400, "Connection failed", "This connection is for another property.")
        return name

    def start(self, request: Request, context: Context) -> Response:
        """Check the platform's state, then redirect to the provider's authorize URL."""
        if self.property_name is None:
            button_property(context.environment)  # raises OAuthSetupError when there is none
        state = request.query.get("state")
        if not state:
            return _page(
                400,
                "Connection failed",
                "Start the connection with the Connect button on the installation's page.",
            )
        checked = self.checked_property(context, state)
        if isinstance(checked, Response):
            return checked
        options = {"prompt": self.prompt} if self.prompt else {}
        with _plain_http_allowed_on_loopback(self.authorize_url):
            url = WebApplicationClient(self.client_id).prepare_request_uri(
                self.authorize_url,
                redirect_uri=self.redirect_uri(context),
                scope=self.scopes,
                state=state,
                **options,
            )
        return Response.redirect(url)

    def exchange(self, context: Context, code: str, name: str) -> TokenResponse | Response:
        """Trade the code for tokens at the token endpoint (through ``context.fetch``)."""
        client = WebApplicationClient(self.client_id)
        body = client.prepare_request_body(
            code=code,
            redirect_uri=self.redirect_uri(context),
            client_secret=self.client_secret,
            include_client_id=True,  # the client's own id, in the body
        )
        try:
            with _plain_http_allowed_on_loopback(self.access_token_url):
                answer = context.fetch(
                    self.access_token_url,
                    method="POST",
                    headers={
                        "Content-Type": "application/x-www-form-urlencoded",
                        "Accept": "application/json",
                    },
                    body=body,
                    timeout=TOKEN_TIMEOUT,
                )
        except FetchError as error:
            return _page(
                502, "Connection failed", f"The token endpoint could not be reached: {error}"
            )
        try:
            fields = answer.json()
        except ValueError:
            fields = {}
        fields = fields if isinstance(fields, dict) else {}
        if not 200 <= answer.status < 300:
            return TokenResponse(fields, answer.status, False, name)
        try:
            token = client.parse_request_body_response(answer.text(), scope=self.scopes)
        except (OAuth2Error, ValueError, Warning):
            return TokenResponse(fields, answer.status, False, name)
        return TokenResponse(dict(token), answer.status, True, name)

    def finish(self, request: Request, context: Context) -> Response:
        """Check the state again, exchange the code and have the platform store the
        credentials (using the state up)."""
        state, code = request.query.get("state"), request.query.get("code")
        if not state:
            return _page(400, "Connection failed", "The callback carries no state.")
        name = self.checked_property(context, state)
        if isinstance(name, Response):
            return name
        response = self.exchange(context, code, name)
        if isinstance(response, Response):
            return response
        try:
            credentials = self.extract(response)
        except Exception as error:
            return _page(502, "Connection failed", f"The token exchange failed: {error}")
        completion = {"state": state, "configuration": credentials.get("configuration")}
        if credentials.get("externalIds") is not None:
            completion["externalIds"] = list(credentials["externalIds"])
        try:
            context.api.post(COMPLETE_PATH, completion)
        except PlatformAPIError as error:
            if 400 <= error.status < 500:
                message = f"The platform refused the credentials: {error.body}"
                return _page(400, "Connection failed", message)
            return _page(502, "Connection failed", "The platform did not store the credentials.")
        except FetchError:
            return _page(502, "Connection failed", "The platform did not store the credentials.")
        return _page(200, "Connected", "Connected — you can close this window.")


def create_oauth_handler(
    client_id: str, client_secret: str, authorize_url: str, access_token_url: str, **options
) -> OAuthHandler:
    """A ``fetch``-style handler, usually mounted at ``/oauth``: ``handler(request, context)``.

    ``options`` are :class:`OAuthHandler`'s: ``redirect_url``, ``scopes``, ``prompt``,
    ``extract_credentials`` and ``property_name``.
    """
    return OAuthHandler(client_id, client_secret, authorize_url, access_token_url, **options)
