"""Cursor pages of the API's lists that grow without bound (an organization's events, an
installation's deliveries): ``{"next", "previous", "results"}``, newest first, read by
``docplatform.keyset`` (no count of the whole table, no offset). The other lists keep
``limit`` and ``offset`` (``inputs.BoundedLimitOffsetPagination``): they are bounded by
what people make by hand."""

from django.conf import settings
from rest_framework import serializers
from rest_framework.pagination import BasePagination
from rest_framework.response import Response
from rest_framework.utils.urls import replace_query_param

from ..keyset import BadCursor, keyset_page
from .inputs import MAX_LIMIT, QueryParameters, WholeNumberField

CURSOR_HELP = (
    "Where the page starts: the cursor in a previous answer's next or previous link (opaque). "
    "Left out: the newest rows."
)


class CursorWindow(QueryParameters):
    """``limit`` and ``cursor`` of a cursor-paged list, or a 400 naming them."""

    limit = WholeNumberField(
        required=False, min_value=1, max_value=MAX_LIMIT, help_text="Rows to return."
    )
    cursor = serializers.CharField(required=False, max_length=200, help_text=CURSOR_HELP)


class NewestFirstCursorPagination(BasePagination):
    """Pages newest first by ``(created_at, id)``; ``next`` and ``previous`` are links (null
    at either end). A cursor the list never gave is a 400 naming ``cursor``."""

    window_serializer = CursorWindow

    def paginate_queryset(self, queryset, request, view=None):
        window = self.window_serializer(data=request.query_params)
        window.is_valid(raise_exception=True)
        limit = window.validated_data.get("limit", settings.REST_FRAMEWORK["PAGE_SIZE"])
        try:
            self.page = keyset_page(
                queryset, cursor=window.validated_data.get("cursor"), limit=limit
            )
        except BadCursor as exc:
            raise serializers.ValidationError({"cursor": [str(exc)]}) from exc
        self.url = request.build_absolute_uri()
        return self.page.rows

    def _link(self, cursor: str | None) -> str | None:
        if cursor is None:
            return None
        return replace_query_param(self.url, "cursor", cursor)

    def get_paginated_response(self, data):
        return Response(
            {
                "next": self._link(self.page.older),
                "previous": self._link(self.page.newer),
                "results": data,
            }
        )

    def get_paginated_response_schema(self, schema):
        link = {"type": "string", "nullable": True, "format": "uri"}
        return {
            "type": "object",
            "required": ["next", "previous", "results"],
            "properties": {
                "next": {
                    **link,
                    "description": "The next page (older rows); null on the last page.",
                    "example": "https://docs.example.com/api/v1/orgs/acme/events/?cursor=bnwyMDI2LTExLTI5",
                },
                "previous": {
                    **link,
                    "description": "The previous page (newer rows); null on the first page.",
                },
                "results": schema,
            },
        }

    def get_schema_operation_parameters(self, view):
        fields = self.window_serializer().fields
        return [
            {
                "name": "cursor",
                "required": False,
                "in": "query",
                "description": CURSOR_HELP,
                "schema": {"type": "string", "maxLength": fields["cursor"].max_length},
            },
            {
                "name": "limit",
                "required": False,
                "in": "query",
                "description": "Rows to return.",
                "schema": {
                    "type": "integer",
                    "minimum": fields["limit"].min_value,
                    "maximum": fields["limit"].max_value,
                },
            },
        ]
