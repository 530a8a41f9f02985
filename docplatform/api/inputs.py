"""What the REST API accepts before a serializer sees it: bodies, page windows and path ids.

Every limit here turns input that would otherwise fail deep in the database (a NUL character
PostgreSQL refuses, an unpaired surrogate no database can encode, an offset past 64 bits, a
body of any size) into a 400, 404 or 413 up front.
"""

import io
import re

from django.conf import settings
from rest_framework import serializers
from rest_framework.exceptions import APIException, ParseError
from rest_framework.pagination import LimitOffsetPagination
from rest_framework.parsers import JSONParser

MAX_JSON_DEPTH = 64
MAX_LIMIT = 500
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
    """JSON of at most ``DATA_UPLOAD_MAX_MEMORY_SIZE`` bytes (or the view's own
    ``max_request_bytes``: a whole revision's), nested at most 64 levels deep, whose strings
    any database can store."""

    def parse(self, stream, media_type=None, parser_context=None):
        view = (parser_context or {}).get("view")
        limit = getattr(view, "max_request_bytes", None) or settings.DATA_UPLOAD_MAX_MEMORY_SIZE
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


class LargeRequestBody:
    """A view (mixin, before APIView) whose requests may pass DATA_UPLOAD_MAX_MEMORY_SIZE, up
    to its ``max_request_bytes``: the body is read here within that bound, where Django's
    ``HttpRequest.body`` (which DRF's JSON parsing reads) would refuse anything past its own
    limit; SafeJSONParser then checks the view's bound."""

    max_request_bytes: int

    def initialize_request(self, request, *args, **kwargs):
        length = request.META.get("CONTENT_LENGTH") or ""
        declared = int(length) if length.isdigit() else 0
        if not request._read_started and 0 < declared <= self.max_request_bytes:
            request._body = request.read(self.max_request_bytes + 1)
        return super().initialize_request(request, *args, **kwargs)


class PlainTextJSONParser(SafeJSONParser):
    """JSON sent as ``text/plain``, as ``navigator.sendBeacon`` sends a string (the beacon)."""

    media_type = "text/plain"


class QueryParameters(serializers.Serializer):
    """Query parameters of a request: each one given is its field's, or a 400 naming it.
    A parameter given empty (``?level=``) is refused too, where DRF would take it as absent."""

    EMPTY = "give a value, or leave the parameter out"

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        for field in self.fields.values():
            field.error_messages.setdefault("blank", self.EMPTY)

    def to_internal_value(self, data):
        empty = {
            name: [serializers.ErrorDetail(self.EMPTY, code="blank")]
            for name in self.fields
            if hasattr(data, "getlist") and "" in data.getlist(name)
        }
        if empty:
            raise serializers.ValidationError(empty)
        return super().to_internal_value(data)


class WholeNumberField(serializers.IntegerField):
    """A query parameter that is a whole number written in digits: ``2.0``, ``+2``, `` 2``
    or ``1e3`` are refused, not read as 2 or 1000."""

    DIGITS = re.compile(r"[0-9]{1,20}")

    def to_internal_value(self, data):
        if isinstance(data, str) and not self.DIGITS.fullmatch(data):
            self.fail("invalid")
        return super().to_internal_value(data)


class TextField(serializers.CharField):
    """Text in a JSON body: a number or a boolean is refused, not turned into text."""

    default_error_messages = {"not_text": "give text (a JSON string), not {kind}"}
    JSON_KINDS = {bool: "a boolean", int: "a number", float: "a number", dict: "an object"}

    def to_internal_value(self, data):
        if not isinstance(data, str):
            self.fail("not_text", kind=self.JSON_KINDS.get(type(data), "this value"))
        return super().to_internal_value(data)


class EventTypeField(serializers.RegexField):
    """An event type as a filter: lower-case letters and underscores (``space_view``)."""

    def __init__(self, **kwargs):
        super().__init__(
            r"^[a-z][a-z_]{0,63}$",
            error_messages={
                "invalid": "an event type is lower-case letters and underscores, e.g. space_view"
            },
            **kwargs,
        )


class PageWindow(QueryParameters):
    """``limit`` and ``offset`` of a list: whole numbers in range, or a 400 naming them."""

    limit = WholeNumberField(
        required=False, min_value=1, max_value=MAX_LIMIT, help_text="Rows to return."
    )
    offset = WholeNumberField(
        required=False, min_value=0, max_value=MAX_OFFSET, help_text="Rows to skip."
    )


class BoundedLimitOffsetPagination(LimitOffsetPagination):
    """Limit and offset pages that refuse a window they cannot serve (DRF's own falls back
    to the defaults on any value it cannot read)."""

    max_limit = MAX_LIMIT
    window_serializer = PageWindow

    def paginate_queryset(self, queryset, request, view=None):
        window = self.window_serializer(data=request.query_params)
        window.is_valid(raise_exception=True)
        self.window = window.validated_data
        return super().paginate_queryset(queryset, request, view)

    def get_limit(self, request):
        return self.window.get("limit", self.default_limit)

    def get_offset(self, request):
        return self.window.get("offset", 0)

    def get_schema_operation_parameters(self, view):
        fields = self.window_serializer().fields
        parameters = super().get_schema_operation_parameters(view)
        for parameter in parameters:
            field = fields[parameter["name"]]
            parameter["schema"].update(minimum=field.min_value, maximum=field.max_value)
        return parameters


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
