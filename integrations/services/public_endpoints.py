"""The public endpoints' decisions (``integrations.views`` only turns them into HTTP): which
version a request runs and for which installation (a paused installation, one without code,
an unknown integration are refused), how large its body may be, and what of the request
and of the answer crosses between the world and integration code: the platform's session
and CSRF cookies and API tokens never reach the code, a ``Set-Cookie`` naming a platform
cookie never reaches the world."""

import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass

from django.conf import settings

from docplatform.models import ApiToken

from ..endpoint_selectors import installation_for_call, integration_for_call
from ..gateway.client import call_runtime
from ..gateway.envelopes import fetch_event
from ..gateway.failures import ClientFault
from ..models import Installation, IntegrationLog, IntegrationVersion
from ..policies import is_paused, runnable_version
from ..runtime.protocol import UNFORWARDED_HEADERS
from ..selectors import oauth_paths

#: Headers that belong to one connection, or that the platform's server sets itself.
UNRELAYED_HEADERS = UNFORWARDED_HEADERS | {"server", "date"}
PLATFORM_TOKEN = re.compile(
    rf"^\s*bearer\s+({ApiToken.PREFIX}|{Installation.TOKEN_PREFIX})", re.IGNORECASE
)


@dataclass(frozen=True)
class EndpointTarget:
    """What a public endpoint's request runs: a version, for an installation or none."""

    version: IntegrationVersion
    installation: Installation | None = None


def installation_endpoint_target(installation_id: str) -> EndpointTarget:
    """ClientFault for an unknown or paused installation, or one whose version has no code."""
    installation = installation_for_call(installation_id, kept=True)
    if installation is None:
        raise ClientFault("not_found", "no such installation")
    if is_paused(installation):
        raise ClientFault("installation_paused", "the installation is paused")
    version = runnable_version(installation.integration, installation)
    if version is None:
        raise ClientFault("no_script", "the integration has no code to run")
    return EndpointTarget(version=version, installation=installation)


def integration_endpoint_target(name: str) -> EndpointTarget:
    integration = integration_for_call(name)
    version = runnable_version(integration) if integration else None
    if version is None:
        raise ClientFault("not_found", "no such integration endpoint")
    return EndpointTarget(version=version)


def request_body(declared_length: str | None, read: Callable[[int], bytes]) -> bytes:
    """The request's body, read up to ``PUBLIC_ENDPOINT_MAX_BODY`` bytes: ClientFault
    (``body_too_large``) for a larger one, declared or sent."""
    limit = settings.PUBLIC_ENDPOINT_MAX_BODY
    declared = declared_length or "0"
    if not declared.isdigit() or int(declared) > limit:
        raise ClientFault("body_too_large", f"the request body may be at most {limit} bytes")
    body = read(limit + 1)
    if len(body) > limit:
        raise ClientFault("body_too_large", "the request body is too large")
    return body


def _platform_cookies() -> set[str]:
    return {
        settings.SESSION_COOKIE_NAME,
        settings.CSRF_COOKIE_NAME,
        settings.LANGUAGE_COOKIE_NAME,
        "messages",
    }


def relayed_request_headers(headers: Mapping[str, str]) -> dict:
    """The request's headers without the platform's cookies and API tokens."""
    platform_cookies = _platform_cookies()
    relayed = {}
    for name, value in headers.items():
        if name.lower() == "cookie":
            kept = [
                part
                for part in value.split(";")
                if part.split("=", 1)[0].strip() not in platform_cookies and part.strip()
            ]
            if not kept:
                continue
            value = ";".join(kept).strip()
        elif name.lower() == "authorization" and PLATFORM_TOKEN.match(value):
            continue
        relayed[name] = value
    return relayed


def relayed_answer_headers(headers: Mapping[str, str]) -> Iterable[tuple[str, str]]:
    """The integration's answer headers the world gets: none of one connection's, none the
    server sets, no ``Set-Cookie`` naming a platform cookie."""
    names = "|".join(re.escape(name) for name in _platform_cookies())
    platform_cookie = re.compile(rf"(^|,)\s*({names})\s*=")
    for name, value in headers.items():
        if name.lower() in UNRELAYED_HEADERS:
            continue
        if name.lower() == "set-cookie" and platform_cookie.search(value):
            continue
        yield name, value


def _log_kind(path: str, target: EndpointTarget) -> str:
    """``oauth`` for a request to an installation's OAuth flow, else ``fetch`` (its log)."""
    route = "/" + path.strip("/")
    if target.installation is not None and any(
        route == prefix or route.startswith(prefix.rstrip("/") + "/")
        for prefix in oauth_paths(target.version.integration)
    ):
        return IntegrationLog.Kind.OAUTH
    return IntegrationLog.Kind.FETCH


def endpoint_call(
    target: EndpointTarget, *, method: str, full_path: str, path: str, headers, body: bytes
):
    """Relay one request to the runtime as a ``fetch`` event; the integration's answer
    (RuntimeFailure when there is none)."""
    event = fetch_event(
        method, settings.INTEGRATIONS_URL + full_path, relayed_request_headers(headers)
    )
    return call_runtime(
        event,
        version=target.version,
        installation=target.installation,
        fetch_body=body,
        kind=_log_kind(path, target),
    )
