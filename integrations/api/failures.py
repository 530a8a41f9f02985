"""Runtime failures (the gateway's taxonomy) as REST API answers: its status and the API's
one error shape. A 5xx here is the integration's or the runtime's failure, answered rather
than reported as the platform's own server error."""

from rest_framework.response import Response

from ..gateway.failures import RuntimeFailure


def failure_response(failure: RuntimeFailure) -> Response:
    return Response(failure.as_api_error(), status=failure.status)
