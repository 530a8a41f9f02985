"""The 409 of a write whose changes overlap changes written since its base revision
(``documents.services.ContentConflict``): the API's error shape, with the overlapping hunks."""

from drf_spectacular.utils import OpenApiResponse, inline_serializer
from rest_framework import serializers, status
from rest_framework.response import Response

_HUNK = inline_serializer(
    "ContentConflictHunk",
    {
        "field": serializers.ChoiceField(choices=["title", "body"]),
        "base": serializers.CharField(allow_blank=True),
        "theirs": serializers.CharField(allow_blank=True),
        "mine": serializers.CharField(allow_blank=True),
    },
    many=True,
)
CONTENT_CONFLICT = OpenApiResponse(
    inline_serializer(
        "ContentConflictResponse",
        {
            "type": serializers.CharField(help_text="client_error"),
            "errors": inline_serializer(
                "ContentConflictDetail",
                {
                    "code": serializers.CharField(help_text="conflict"),
                    "detail": serializers.CharField(),
                    "attr": serializers.CharField(allow_null=True),
                },
                many=True,
            ),
            "currentRevision": serializers.CharField(allow_null=True),
            "conflicts": inline_serializer(
                "ContentConflictPage",
                {
                    "page": serializers.CharField(),
                    "hunks": _HUNK,
                    "deletedBy": serializers.ChoiceField(
                        choices=["theirs", "mine"], required=False
                    ),
                },
                many=True,
            ),
        },
    ),
    description="Changes written since baseRevision overlap these: nothing was written.",
)


def content_conflict_response(
    conflict, *, detail: str | None = None, attr: str | None = "baseRevision"
) -> Response:
    """409, in the API's error shape, with what overlaps: ``conflicts``, a page's hunks each
    as it was (``base``) and as each side left it. ``detail`` and ``attr`` say what to do
    where the write was not a revision's (a change request's)."""
    current = conflict.current.id if conflict.current else None
    detail = detail or (
        f"changes written since baseRevision (the space's current revision is {current}) "
        "overlap these: resolve each hunk and write again from the current revision"
    )
    return Response(
        {
            "type": "client_error",
            "errors": [{"code": "conflict", "detail": detail, "attr": attr}],
            "currentRevision": current,
            "conflicts": [clash.as_json() for clash in conflict.clashes],
        },
        status=status.HTTP_409_CONFLICT,
    )
