"""Public endpoints: requests from the world relayed to an integration's ``fetch``.

``{PLATFORM_URL}/endpoints/installations/{id}/...`` is an installation's public endpoint
(``environment.installation.urls.publicEndpoint``); ``/endpoints/integrations/{name}/...``
the integration's own, called without an installation. Any method, path, query, headers and
raw body go to the runtime as a ``fetch`` event; the integration's answer comes back as is.
"""

import uuid

from django.conf import settings
from django.http import HttpResponse, JsonResponse
from django.views.decorators.csrf import csrf_exempt

from .models import Installation, Integration
from .runtime.host import UNFORWARDED_HEADERS
from .runtime_client import RuntimeUnavailable, call_runtime

#: Headers that belong to one connection, or that the platform's server sets itself.
UNRELAYED_HEADERS = UNFORWARDED_HEADERS | {"server", "date"}
FAILURE_STATUS = {"timeout": 504, "busy": 503}


def _error(status: int, error: str, message: str) -> JsonResponse:
    return JsonResponse({"error": error, "message": message}, status=status)


def _relay(request, *, version, installation=None) -> HttpResponse:
    declared = request.META.get("CONTENT_LENGTH") or "0"
    if not declared.isdigit() or int(declared) > settings.PUBLIC_ENDPOINT_MAX_BODY:
        limit = settings.PUBLIC_ENDPOINT_MAX_BODY
        return _error(413, "body_too_large", f"the request body may be at most {limit} bytes")
    body = request.read(settings.PUBLIC_ENDPOINT_MAX_BODY + 1)
    if len(body) > settings.PUBLIC_ENDPOINT_MAX_BODY:
        return _error(413, "body_too_large", "the request body is too large")
    event = {
        "type": "fetch",
        "eventId": str(uuid.uuid4()),
        "request": {
            "method": request.method,
            "url": settings.PLATFORM_URL + request.get_full_path(),
            "headers": {name: value for name, value in request.headers.items()},
        },
    }
    try:
        answer = call_runtime(event, version=version, installation=installation, fetch_body=body)
    except RuntimeUnavailable as exc:
        return _error(502, "runtime_unavailable", str(exc))
    if answer.failure:
        return _error(FAILURE_STATUS.get(answer.outcome, 502), answer.outcome, answer.failure)
    response = HttpResponse(answer.body, status=answer.status)
    for name, value in answer.headers.items():
        if name.lower() not in UNRELAYED_HEADERS:
            response[name] = value
    return response


def _runnable_version(integration: Integration):
    version = integration.latest_version
    return version if version is not None and version.script_path else None


@csrf_exempt
def installation_endpoint(request, installation_id: str, path: str = ""):
    installation = (
        Installation.objects.select_related("integration__latest_version", "parent")
        # The script is sent only when the runtime host asks for it (a deferred read then).
        .defer("integration__latest_version__script")
        .filter(pk=installation_id)
        .first()
    )
    if installation is None:
        return _error(404, "not_found", "no such installation")
    if Installation.Status.PAUSED in (
        installation.status,
        installation.parent.status if installation.parent else None,
    ):
        return _error(503, "installation_paused", "the installation is paused")
    version = _runnable_version(installation.integration)
    if version is None:
        return _error(404, "no_script", "the integration has no code to run")
    return _relay(request, version=version, installation=installation)


@csrf_exempt
def integration_endpoint(request, name: str, path: str = ""):
    integration = (
        Integration.objects.select_related("latest_version")
        .defer("latest_version__script")
        .filter(name=name)
        .first()
    )
    version = _runnable_version(integration) if integration else None
    if version is None:
        return _error(404, "not_found", "no such integration endpoint")
    return _relay(request, version=version)
