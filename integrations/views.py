"""Public endpoints: requests from the world relayed to an integration's ``fetch``.

Served on the integrations host only (``INTEGRATIONS_URL``, see ``integrations.middleware``):
``{INTEGRATIONS_URL}/installations/{id}/...`` is an installation's public endpoint
(``environment.installation.urls.publicEndpoint``); ``/integrations/{name}/...`` the
integration's own, called without an installation. Any method, path, query, headers and raw
body go to the runtime as a ``fetch`` event; the integration's answer comes back as is, less
what could carry the platform's credentials: its session and CSRF cookies and API tokens
never go to integration code, and a ``Set-Cookie`` naming a platform cookie is dropped.
"""

import re

from django.conf import settings
from django.http import HttpResponse, JsonResponse
from django.views.decorators.csrf import csrf_exempt

from docplatform.models import ApiToken

from .endpoint_selectors import installation_for_call, integration_for_call
from .gateway.call_log import lines_held, write_after
from .gateway.client import call_runtime
from .gateway.envelopes import fetch_event
from .gateway.failures import ClientFault, RuntimeFailure
from .models import Installation, IntegrationLog
from .policies import is_paused, runnable_version
from .runtime.host import UNFORWARDED_HEADERS
from .selectors import oauth_paths

#: Headers that belong to one connection, or that the platform's server sets itself.
UNRELAYED_HEADERS = UNFORWARDED_HEADERS | {"server", "date"}


def _failed(failure: RuntimeFailure) -> JsonResponse:
    return JsonResponse(failure.as_json(), status=failure.status)


def not_found(request, exception):
    """The integrations host's 404: only the public endpoints are served there."""
    return _failed(ClientFault("not_found", "only integration endpoints are served on this host"))


def server_error(request):
    return JsonResponse(
        {"error": "server_error", "message": "the platform failed to relay this request"},
        status=500,
    )


def _platform_cookies() -> set[str]:
    return {
        settings.SESSION_COOKIE_NAME,
        settings.CSRF_COOKIE_NAME,
        settings.LANGUAGE_COOKIE_NAME,
        "messages",
    }


PLATFORM_TOKEN = re.compile(
    rf"^\s*bearer\s+({ApiToken.PREFIX}|{Installation.TOKEN_PREFIX})", re.IGNORECASE
)


def _relayed_request_headers(request) -> dict:
    """The request's headers without the platform's cookies and API tokens."""
    platform_cookies = _platform_cookies()
    headers = {}
    for name, value in request.headers.items():
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
        headers[name] = value
    return headers


def _sets_platform_cookie(value: str) -> bool:
    names = "|".join(re.escape(name) for name in _platform_cookies())
    return re.search(rf"(^|,)\s*({names})\s*=", value) is not None


def _relay(request, path: str, *, version, installation=None) -> HttpResponse:
    with lines_held() as lines:  # the call's log line is written once the answer is sent
        try:
            body = _body(request)
            event = fetch_event(
                request.method,
                settings.INTEGRATIONS_URL + request.get_full_path(),
                _relayed_request_headers(request),
            )
            answer = call_runtime(
                event,
                version=version,
                installation=installation,
                fetch_body=body,
                kind=_log_kind(path, version.integration, installation),
            )
        except RuntimeFailure as failure:
            return write_after(_failed(failure), lines)
    return write_after(_relayed(answer), lines)


def _relayed(answer) -> HttpResponse:
    response = HttpResponse(answer.body, status=answer.status)
    for name, value in answer.headers.items():
        if name.lower() in UNRELAYED_HEADERS:
            continue
        if name.lower() == "set-cookie" and _sets_platform_cookie(value):
            continue
        response[name] = value
    return response


def _log_kind(path: str, integration, installation) -> str:
    """``oauth`` for a request to an installation's OAuth flow, else ``fetch`` (its log)."""
    route = "/" + path.strip("/")
    if installation is not None and any(
        route == prefix or route.startswith(prefix.rstrip("/") + "/")
        for prefix in oauth_paths(integration)
    ):
        return IntegrationLog.Kind.OAUTH
    return IntegrationLog.Kind.FETCH


def _body(request) -> bytes:
    limit = settings.PUBLIC_ENDPOINT_MAX_BODY
    declared = request.META.get("CONTENT_LENGTH") or "0"
    if not declared.isdigit() or int(declared) > limit:
        raise ClientFault("body_too_large", f"the request body may be at most {limit} bytes")
    body = request.read(limit + 1)
    if len(body) > limit:
        raise ClientFault("body_too_large", "the request body is too large")
    return body


@csrf_exempt
def installation_endpoint(request, installation_id: str, path: str = ""):
    installation = installation_for_call(installation_id)
    if installation is None:
        return _failed(ClientFault("not_found", "no such installation"))
    if is_paused(installation):
        return _failed(ClientFault("installation_paused", "the installation is paused"))
    version = runnable_version(installation.integration, installation)
    if version is None:
        return _failed(ClientFault("no_script", "the integration has no code to run"))
    return _relay(request, path, version=version, installation=installation)


@csrf_exempt
def integration_endpoint(request, name: str, path: str = ""):
    integration = integration_for_call(name)
    version = runnable_version(integration) if integration else None
    if version is None:
        return _failed(ClientFault("not_found", "no such integration endpoint"))
    return _relay(request, path, version=version)
