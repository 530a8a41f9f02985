"""One error shape for the whole REST API: drf-standardized-errors', service errors included.

Services raise Django's ``ValidationError`` (a dict keyed by dotted field paths),
``PermissionDenied`` or ``Http404``; they answer exactly as a serializer's errors would, with
``attr`` the dotted path. Oversized bodies answer 413, and a URL that matches no endpoint
under ``/api/`` answers the same JSON 404, so no input reaches a caller as an HTML page.
"""

from contextlib import contextmanager

from django.core import exceptions as django_exceptions
from django.http import JsonResponse
from django.views import defaults
from drf_standardized_errors.handler import ExceptionHandler
from rest_framework import exceptions
from rest_framework.exceptions import ErrorDetail

from .inputs import PayloadTooLarge

API_PREFIX = "/api/"


def _details(errors: list[django_exceptions.ValidationError]) -> list[ErrorDetail]:
    return [
        ErrorDetail(message, code=error.code or "invalid") for error in errors for message in error
    ]


def as_api_validation_error(error: django_exceptions.ValidationError) -> exceptions.ValidationError:
    if hasattr(error, "error_dict"):
        return exceptions.ValidationError(
            {path: _details(errors) for path, errors in error.error_dict.items()}
        )
    return exceptions.ValidationError(_details(error.error_list))


class ApiExceptionHandler(ExceptionHandler):
    def convert_known_exceptions(self, exc: Exception) -> Exception:
        if isinstance(exc, django_exceptions.ValidationError):
            return as_api_validation_error(exc)
        if isinstance(exc, django_exceptions.PermissionDenied) and str(exc):
            # A service's reason (e.g. "… is not an admin of organization 'acme'") is kept.
            return exceptions.PermissionDenied(str(exc))
        if isinstance(
            exc,
            django_exceptions.RequestDataTooBig
            | django_exceptions.TooManyFieldsSent
            | django_exceptions.TooManyFilesSent,
        ):
            return PayloadTooLarge()
        return super().convert_known_exceptions(exc)


@contextmanager
def renamed_error_fields(**api_names: str):
    """Re-raise a service's ValidationError with its field names as the API spells them."""
    try:
        yield
    except django_exceptions.ValidationError as error:
        if not hasattr(error, "error_dict"):
            raise
        renamed = {}
        for path, errors in error.error_dict.items():
            head, dot, rest = path.partition(".")
            renamed[api_names.get(head, head) + dot + rest] = errors
        raise django_exceptions.ValidationError(renamed) from error


def _error_body(code: str, detail: str) -> dict:
    return {"type": "client_error", "errors": [{"code": code, "detail": detail, "attr": None}]}


def api_not_found(request):
    return JsonResponse(_error_body("not_found", "Not found."), status=404)


class ApiNotFoundMiddleware:
    """An address under ``/api/`` that matches nothing answers the API's JSON 404 with DEBUG
    on too, where Django answers its HTML debug page instead of calling ``handler404``.
    Listed before CommonMiddleware, so its redirect to the address with a slash still wins."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        response = self.get_response(request)
        if (
            response.status_code == 404
            and request.path.startswith(API_PREFIX)
            and response.get("Content-Type", "").startswith("text/html")
        ):
            return api_not_found(request)
        return response


def not_found(request, exception):
    """Django's 404 page, or the API's JSON 404 under ``/api/``."""
    if request.path.startswith(API_PREFIX):
        return api_not_found(request)
    return defaults.page_not_found(request, exception)


def server_error(request):
    if request.path.startswith(API_PREFIX):
        body = {
            "type": "server_error",
            "errors": [{"code": "error", "detail": "Server Error (500)", "attr": None}],
        }
        return JsonResponse(body, status=500)
    return defaults.server_error(request)
