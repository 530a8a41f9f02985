"""Public endpoints: requests from the world relayed to an integration's ``fetch``.

Served on the integrations host only (``INTEGRATIONS_URL``, see ``integrations.middleware``):
``{INTEGRATIONS_URL}/installations/{id}/...`` is an installation's public endpoint
(``environment.installation.urls.publicEndpoint``); ``/integrations/{name}/...`` the
integration's own, called without an installation; ``/visitor-auth/{id}`` a site's visitor
signing in through an installation (``services.visitor_auth``). Any method, path, query,
headers and raw body go to the runtime as a ``fetch`` event; the integration's answer comes
back as is, less what could carry the platform's credentials. What is relayed and to which
version is decided by ``services.public_endpoints``; this module turns it into HTTP.
"""

from functools import partial

from django.http import HttpResponse, JsonResponse
from django.views.decorators.csrf import csrf_exempt

from .gateway.call_log import after_answer, answer_held
from .gateway.failures import ClientFault, RuntimeFailure
from .services.public_endpoints import (
    EndpointTarget,
    endpoint_call,
    installation_endpoint_target,
    integration_endpoint_target,
    relayed_answer_headers,
    request_body,
)
from .services.visitor_auth import visitor_authentication_call, visitor_authentication_target


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


def _relay(request, path: str, target: EndpointTarget, call=None) -> HttpResponse:
    """Relay the request to ``call`` (``endpoint_call`` by default) and its answer back."""
    with answer_held() as held:  # the call's log line is written once the answer is sent
        try:
            answer = (call or partial(endpoint_call, path=path))(
                target,
                method=request.method,
                full_path=request.get_full_path(),
                headers=request.headers,
                body=request_body(request.META.get("CONTENT_LENGTH"), request.read),
            )
        except RuntimeFailure as failure:
            return after_answer(_failed(failure), held)
        response = HttpResponse(answer.body, status=answer.status)
        for name, value in relayed_answer_headers(answer.headers):
            response[name] = value
    return after_answer(response, held)


@csrf_exempt
def installation_endpoint(request, installation_id: str, path: str = ""):
    try:
        target = installation_endpoint_target(installation_id)
    except RuntimeFailure as failure:
        return _failed(failure)
    return _relay(request, path, target)


@csrf_exempt
def integration_endpoint(request, name: str, path: str = ""):
    try:
        target = integration_endpoint_target(name)
    except RuntimeFailure as failure:
        return _failed(failure)
    return _relay(request, path, target)


@csrf_exempt
def visitor_authentication(request, installation_id: str):
    """A site's visitor signing in (``services.visitor_auth``): relayed to the installation's
    ``visitor_authentication`` handler, its answer back as a public endpoint's is."""
    location = request.GET.get("location", "")
    try:
        target = visitor_authentication_target(installation_id, location)
    except RuntimeFailure as failure:
        return _failed(failure)
    return _relay(request, "", target, partial(visitor_authentication_call, location=location))
