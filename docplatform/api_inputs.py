"""What the REST API accepts before a serializer sees it: bodies, page windows and path ids.

Every limit here turns input that would otherwise fail deep in the database (a NUL character
PostgreSQL refuses, an unpaired surrogate no database can encode, an offset past 64 bits, a
body of any size) into a 400, 404 or 413 up front.
"""

import io

from django.conf import settings
from rest_framework.exceptions import APIException, ParseError
from rest_framework.pagination import LimitOffsetPagination
from rest_framework.parsers import JSONParser

MAX_JSON_DEPTH = 64
MAX_OFFSET = 10**9


class PayloadTooLarge(APIException):
    status_code = 413
    default_detail = "The request body is too large."
    default_code = "payload_too_large"


def _unstorable_text(data) -> str | None:
    """Why the parsed JSON cannot be stored as is, or None."""
    pending = [(data, 1)]
    while pending:
        value, depth = pending.pop()
        if depth > MAX_JSON_DEPTH:
            return f"JSON nested deeper than {MAX_JSON_DEPTH} levels"
        if isinstance(value, dict):
            pending.extend((key, depth) for key in value)
            pending.extend((item, depth + 1) for item in value.values())
        elif isinstance(value, list):
            pending.extend((item, depth + 1) for item in value)
        elif isinstance(value, str):
            if "\x00" in value:
                return "JSON strings must not contain NUL characters"
            try:
                value.encode("utf-8")
            except UnicodeEncodeError:
                return "JSON strings must not contain unpaired surrogates"
    return None


class SafeJSONParser(JSONParser):
    """JSON of at most ``DATA_UPLOAD_MAX_MEMORY_SIZE`` bytes, nested at most 64 levels deep,
    whose strings any database can store."""

    def parse(self, stream, media_type=None, parser_context=None):
        limit = settings.DATA_UPLOAD_MAX_MEMORY_SIZE
        body = stream.read() if limit is None else stream.read(limit + 1)
        if limit is not None and len(body) > limit:
            raise PayloadTooLarge()
        try:
            data = super().parse(io.BytesIO(body), media_type, parser_context)
        except RecursionError as exc:
            raise ParseError(
                f"JSON parse error - nested deeper than {MAX_JSON_DEPTH} levels"
            ) from exc
        problem = _unstorable_text(data)
        if problem:
            raise ParseError(f"JSON parse error - {problem}")
        return data


class PlainTextJSONParser(SafeJSONParser):
    """JSON sent as ``text/plain``, as ``navigator.sendBeacon`` sends a string (the beacon)."""

    media_type = "text/plain"


class BoundedLimitOffsetPagination(LimitOffsetPagination):
    max_limit = 500

    def get_offset(self, request):
        return min(super().get_offset(request), MAX_OFFSET)


class ObjectIdConverter:
    """The platform's string ids (``docplatform.ids``)."""

    regex = "[A-Za-z0-9]{1,32}"

    def to_python(self, value: str) -> str:
        return value

    def to_url(self, value: str) -> str:
        return value


class OrganizationRefConverter(ObjectIdConverter):
    """An organization's id or subdomain."""

    regex = "[A-Za-z0-9-]{1,63}"


class IntegrationNameConverter(ObjectIdConverter):
    regex = "[A-Za-z0-9_-]{1,64}"


class DeliveryIdConverter:
    regex = "[0-9]{1,18}"

    def to_python(self, value: str) -> int:
        return int(value)

    def to_url(self, value: int) -> str:
        return str(value)
