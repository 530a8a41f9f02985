"""``create_oauth_handler``: the OAuth 2 authorization-code flow behind a ``button`` property.

The platform issues the ``state`` (signed, bound to the installation, expiring, single-use)
and consumes it on the callback; the handler redirects, exchanges the code with
requests-oauthlib and writes the credentials back with the installation's token.
"""

import os
from collections.abc import Callable
from contextlib import contextmanager
from html import escape
from urllib.parse import urlsplit

import requests
from oauthlib.oauth2 import OAuth2Error
from requests_oauthlib import OAuth2Session

from .context import Context, PlatformAPIError
from .http_messages import Request, Response
from .jsonobject import JSONObject

STATE_PATH = "/installation/oauth/state"
STATE_CONSUME_PATH = "/installation/oauth/state/consume"
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


def create_oauth_handler(
    client_id: str,
    client_secret: str,
    authorize_url: str,
    access_token_url: str,
    redirect_url: str | None = None,
    scopes: list[str] | None = None,
    prompt: str | None = None,
    extract_credentials: Callable | None = None,
    property_name: str | None = None,
) -> Callable:
    """A ``fetch``-style handler, usually mounted at ``/oauth``: ``handler(request, context)``.

    ``redirect_url`` defaults to the installation's public endpoint plus ``/oauth``;
    ``property_name`` to the first button property of the installation's configuration.
    """
    extract = extract_credentials or default_extract_credentials

    def session(context: Context, state: str) -> OAuth2Session:
        redirect_uri = redirect_url
        if redirect_uri is None:
            endpoint = context.environment.installation_endpoint
            if not endpoint:
                raise OAuthSetupError("no installation public endpoint to redirect back to")
            redirect_uri = endpoint.rstrip("/") + "/oauth"
        return OAuth2Session(client_id, redirect_uri=redirect_uri, scope=scopes, state=state)

    def start(context: Context) -> Response:
        name = property_name or button_property(context.environment)
        try:
            state = context.api.post(STATE_PATH, {"property": name})["state"]
        except (PlatformAPIError, requests.RequestException, KeyError, TypeError):
            return _page(502, "Connection failed", "The platform did not issue an OAuth state.")
        options = {"prompt": prompt} if prompt else {}
        with _plain_http_allowed_on_loopback(authorize_url):
            url, _ = session(context, state).authorization_url(authorize_url, **options)
        return Response.redirect(url)

    def exchange(context: Context, state: str, code: str, name: str) -> TokenResponse | Response:
        answers = []

        def keep_answer(answer):
            answers.append(answer)
            return answer

        flow = session(context, state)
        flow.register_compliance_hook("access_token_response", keep_answer)
        try:
            with _plain_http_allowed_on_loopback(access_token_url):
                token = flow.fetch_token(
                    access_token_url,
                    code=code,
                    client_secret=client_secret,
                    include_client_id=True,
                    timeout=TOKEN_TIMEOUT,
                )
        except (OAuth2Error, ValueError, requests.RequestException) as error:
            if not answers:
                return _page(
                    502, "Connection failed", f"The token endpoint could not be reached: {error}"
                )
            try:
                fields = answers[-1].json()
            except ValueError:
                fields = {}
            fields = fields if isinstance(fields, dict) else {}
            return TokenResponse(fields, answers[-1].status_code, False, name)
        return TokenResponse(dict(token), answers[-1].status_code, True, name)

    def finish(request: Request, context: Context) -> Response:
        state, code = request.query.get("state"), request.query.get("code")
        if not state:
            return _page(400, "Connection failed", "The callback carries no state.")
        try:
            name = context.api.post(STATE_CONSUME_PATH, {"state": state})["property"]
        except PlatformAPIError as error:
            if 400 <= error.status < 500:
                return _page(
                    400,
                    "Connection failed",
                    "This authorization request is invalid, expired or already used. "
                    "Start the connection again.",
                )
            return _page(502, "Connection failed", "The platform could not check the state.")
        except (requests.RequestException, KeyError, TypeError):
            return _page(502, "Connection failed", "The platform could not check the state.")
        response = exchange(context, state, code, name)
        if isinstance(response, Response):
            return response
        try:
            credentials = extract(response)
        except Exception as error:
            return _page(502, "Connection failed", f"The token exchange failed: {error}")
        try:
            context.api.update_installation(
                configuration=credentials.get("configuration"),
                external_ids=credentials.get("externalIds"),
            )
        except (PlatformAPIError, requests.RequestException):
            return _page(502, "Connection failed", "The platform did not store the credentials.")
        return _page(200, "Connected", "Connected — you can close this window.")

    async def handle(request: Request, context: Context) -> Response:
        error = request.query.get("error")
        if error == "access_denied":
            return _page(400, "Connection cancelled", "Access was denied at the provider.")
        if error:
            detail = request.query.get("error_description") or error
            return _page(400, "Connection failed", f"The provider refused: {detail}")
        if "code" not in request.query:
            return start(context)
        return finish(request, context)

    return handle
