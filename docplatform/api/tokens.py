"""The caller's personal API tokens (``/api/v1/me/tokens/``): make one (shown once), list them,
revoke one. People only (a session or a personal token); an installation token gets 403.

Tokens are stored as their SHA-256 hash: the token itself appears in the answer that made it
and nowhere else. A token made with a token never outlives it (``api_token_create``).
"""

from django.http import Http404
from drf_spectacular.utils import (
    OpenApiExample,
    extend_schema,
    extend_schema_field,
    extend_schema_view,
)
from rest_framework import generics, serializers, status
from rest_framework.response import Response
from rest_framework.views import APIView

from .. import services
from ..models import ApiToken
from ..selectors import api_token_of, api_token_status, api_tokens_of
from .errors import renamed_error_fields

TOKEN_STATUSES = ["active", "expired", "revoked"]


class ApiTokenOutput(serializers.Serializer):
    id = serializers.IntegerField()
    name = serializers.CharField()
    hint = serializers.CharField(help_text="The token's last characters, to recognize it.")
    status = serializers.SerializerMethodField(help_text="active, expired or revoked.")
    createdAt = serializers.DateTimeField(source="created_at")
    expiresAt = serializers.DateTimeField(
        source="expires_at", allow_null=True, help_text="null: it does not expire."
    )
    lastUsedAt = serializers.DateTimeField(source="last_used_at", allow_null=True)
    revokedAt = serializers.DateTimeField(source="revoked_at", allow_null=True)

    @extend_schema_field(serializers.ChoiceField(choices=TOKEN_STATUSES))
    def get_status(self, token) -> str:
        return api_token_status(token)


class ApiTokenCreatedOutput(ApiTokenOutput):
    token = serializers.SerializerMethodField(
        help_text="The token (Authorization: Bearer <token>): in this answer only, never again."
    )

    def get_token(self, token) -> str:
        return self.context["raw"]


class ApiTokenInput(serializers.Serializer):
    name = serializers.CharField(max_length=100, help_text="What the token is for.")
    expiresAt = serializers.DateTimeField(
        required=False,
        allow_null=True,
        help_text="When it stops working (in the future); left out or null: never, or when "
        "the personal token making this request expires.",
    )


@extend_schema_view(get=extend_schema(summary="List the caller's personal tokens"))
class MyTokensApi(generics.ListAPIView):
    """The caller's personal tokens, newest first (GET); make a new one (POST): its token is
    shown in that answer only."""

    queryset = ApiToken.objects.none()
    serializer_class = ApiTokenOutput

    def get_queryset(self):
        return api_tokens_of(self.request.user)

    @extend_schema(
        summary="Make a personal token (shown in this answer only)",
        request=ApiTokenInput,
        responses={201: ApiTokenCreatedOutput},
        examples=[
            OpenApiExample(
                "Until a date",
                value={"name": "CI publishing", "expiresAt": "2030-01-01T00:00:00Z"},
                request_only=True,
            ),
            OpenApiExample("Without expiry", value={"name": "My laptop"}, request_only=True),
        ],
    )
    def post(self, request):
        data = ApiTokenInput(data=request.data)
        data.is_valid(raise_exception=True)
        with renamed_error_fields(expires_at="expiresAt"):
            token, raw = services.api_token_create(
                user=request.user,
                name=data.validated_data["name"],
                expires_at=data.validated_data.get("expiresAt"),
                created_with=request.auth if isinstance(request.auth, ApiToken) else None,
            )
        output = ApiTokenCreatedOutput(token, context={"raw": raw})
        response = Response(output.data, status=status.HTTP_201_CREATED)
        response["Cache-Control"] = "no-store"
        return response


class MyTokenApi(APIView):
    """One of the caller's personal tokens (GET, without the token itself); revoke it
    (DELETE: it stops working at once and stays listed as revoked)."""

    def token(self, request, token_id) -> ApiToken:
        token = api_token_of(request.user, token_id)
        if token is None:
            raise Http404
        return token

    @extend_schema(summary="Get one of the caller's personal tokens", responses=ApiTokenOutput)
    def get(self, request, token_id):
        return Response(ApiTokenOutput(self.token(request, token_id)).data)

    @extend_schema(summary="Revoke one of the caller's personal tokens", responses={204: None})
    def delete(self, request, token_id):
        services.api_token_revoke(token=self.token(request, token_id))
        return Response(status=status.HTTP_204_NO_CONTENT)
