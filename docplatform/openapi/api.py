"""REST API of an organization's OpenAPI documents (``/api/v1/orgs/{org}/openapi/``): the
list, one document with its versions, one version's content; publishing a new version from
the document's text or a URL.

The organization's people read them all and its admins and members publish
(``Action.PUBLISH_OPENAPI``: readers get 403 naming who may); anyone outside it gets 404. An
installation token reaches its installation's organization: ``openapi:read`` to read,
``openapi:write`` to publish, 403 naming the scope without it.
"""

from drf_spectacular.utils import (
    OpenApiExample,
    OpenApiParameter,
    extend_schema,
    extend_schema_field,
)
from rest_framework import generics, serializers, status
from rest_framework.response import Response
from rest_framework.views import APIView

from ..access import Action
from ..api.inputs import TextField
from ..api.lookup import organization_for
from ..api.permissions import ActsByRole
from ..api.schema import service_errors
from ..models import Organization
from . import selectors, services
from .models import NAME_HELP, OpenApiDocument

# --- Representations ------------------------------------------------------------------------


class OpenApiVersionOutput(serializers.Serializer):
    name = serializers.CharField(source="document.name", help_text="The document's name.")
    number = serializers.IntegerField(help_text="1 for the first upload, then 2, 3, ...")
    formatVersion = serializers.CharField(
        source="format_version", help_text='"2.0" (Swagger), "3.0.x" or "3.1.x" (OpenAPI).'
    )
    size = serializers.IntegerField(help_text="Bytes of the document's text.")
    sourceUrl = serializers.CharField(
        source="source_url", help_text="Where it was fetched from; empty when it was sent."
    )
    uploadedBy = serializers.CharField(
        source="uploaded_by_label", help_text="The person, or the integration, who uploaded it."
    )
    createdAt = serializers.DateTimeField(source="created_at")


class OpenApiVersionContentOutput(OpenApiVersionOutput):
    content = serializers.CharField(help_text="The document's text as uploaded (JSON or YAML).")
    document = serializers.JSONField(source="spec", help_text="The document parsed, as JSON.")


class OpenApiDocumentOutput(serializers.Serializer):
    name = serializers.CharField()
    latestVersion = serializers.IntegerField(source="latest_number", allow_null=True)
    versionCount = serializers.IntegerField(source="version_count")
    createdAt = serializers.DateTimeField(source="created_at")
    updatedAt = serializers.DateTimeField(source="updated_at")


class OpenApiDocumentDetailOutput(OpenApiDocumentOutput):
    versions = serializers.SerializerMethodField(help_text="Its versions, the latest first.")

    @extend_schema_field(OpenApiVersionOutput(many=True))
    def get_versions(self, document) -> list:
        return OpenApiVersionOutput(selectors.versions_of(document), many=True).data


class OpenApiPublishInput(serializers.Serializer):
    name = TextField(max_length=64, help_text=NAME_HELP)
    content = TextField(
        required=False,
        trim_whitespace=False,
        help_text="The document's text: JSON or YAML, Swagger 2.0, OpenAPI 3.0 or 3.1.",
    )
    url = TextField(
        required=False,
        max_length=2000,
        help_text="An http(s) URL the platform fetches the document from (a public address; "
        "redirects are not followed).",
    )


# --- Endpoints ------------------------------------------------------------------------------


class OrganizationOpenApi:
    """The organization of the URL, for a caller who may do the method's action in it."""

    permission_classes = [ActsByRole]
    access_actions = {"GET": Action.READ}
    installation_scopes = {"GET": "openapi:read"}

    def organization(self) -> Organization:
        organization = organization_for(self.request, self.kwargs["org"])
        self.check_object_permissions(self.request, organization)
        return organization


@service_errors("name", "content", "url", methods=["post"])
class OpenApiDocumentsApi(OrganizationOpenApi, generics.ListAPIView):
    """The organization's OpenAPI documents by name (GET); a new version of one, the
    document made with its first (POST)."""

    queryset = OpenApiDocument.objects.none()
    serializer_class = OpenApiDocumentOutput
    access_actions = {"GET": Action.READ, "POST": Action.PUBLISH_OPENAPI}
    installation_scopes = {"GET": "openapi:read", "POST": "openapi:write"}

    @extend_schema(summary="List the organization's OpenAPI documents")
    def get(self, request, *args, **kwargs):
        return super().get(request, *args, **kwargs)

    def get_queryset(self):
        return selectors.documents_of(self.organization())

    @extend_schema(
        summary="Publish a version of an OpenAPI document",
        request=OpenApiPublishInput,
        responses={201: OpenApiVersionOutput},
        examples=[
            OpenApiExample(
                "Its text",
                value={"name": "payments", "content": "openapi: 3.1.0\ninfo: ..."},
                request_only=True,
            ),
            OpenApiExample(
                "From a URL",
                value={"name": "payments", "url": "https://api.example.com/openapi.json"},
                request_only=True,
            ),
        ],
    )
    def post(self, request, org):
        organization = self.organization()
        data = OpenApiPublishInput(data=request.data)
        data.is_valid(raise_exception=True)
        given = data.validated_data
        version = services.openapi_publish(
            organization=organization,
            name=given["name"],
            content=given.get("content"),
            url=given.get("url"),
            actor=request.user,
        )
        return Response(OpenApiVersionOutput(version).data, status=status.HTTP_201_CREATED)


class OpenApiDocumentApi(OrganizationOpenApi, APIView):
    """One OpenAPI document with its versions, the latest first."""

    @extend_schema(
        summary="Get an OpenAPI document and its versions", responses=OpenApiDocumentDetailOutput
    )
    def get(self, request, org, name):
        document = selectors.document_of(self.organization(), name)
        return Response(OpenApiDocumentDetailOutput(document).data)


class OpenApiVersionApi(OrganizationOpenApi, APIView):
    """One version of an OpenAPI document with its content: by number, or ``latest``."""

    @extend_schema(
        summary="Get a version of an OpenAPI document",
        parameters=[
            OpenApiParameter(
                "version",
                str,
                OpenApiParameter.PATH,
                description='Its number, or "latest".',
            )
        ],
        responses=OpenApiVersionContentOutput,
    )
    def get(self, request, org, name, version):
        document = selectors.document_of(self.organization(), name)
        return Response(OpenApiVersionContentOutput(selectors.version_of(document, version)).data)
