"""Versions and channels: unpublish a version, release one again (``rollback``; the owning
organization's admins only, others who may see the integration get 403), and mark an
installation as running development versions (``dev``)."""

from drf_spectacular.utils import OpenApiExample, extend_schema
from rest_framework import serializers, status
from rest_framework.response import Response
from rest_framework.views import APIView

from docplatform.access import Action
from docplatform.api.schema import service_errors

from ..services import (
    installation_mark_development,
    integration_release,
    integration_version_unpublish,
)
from .catalogue import VersionOutput, owned_integration_for
from .installation_output import (
    InstallationLookup,
    InstallationOutput,
    installation_example,
    installation_response,
)


@service_errors("version", methods=["delete"])
class IntegrationVersionApi(APIView):
    """Remove one version; refused for the versions installations run and for the only
    version (unpublish the integration instead)."""

    @extend_schema(summary="Unpublish one version of an integration", responses={204: None})
    def delete(self, request, name, number):
        integration_version_unpublish(
            integration=owned_integration_for(request, name), number=number
        )
        return Response(status=status.HTTP_204_NO_CONTENT)


class ReleaseOutput(serializers.Serializer):
    integration = serializers.CharField(source="version.integration.name")
    version = VersionOutput(help_text="The released version now.")
    previous = VersionOutput(
        allow_null=True, help_text="The version released before (the same when unchanged)."
    )
    released = serializers.BooleanField(
        help_text="False when it was released already and no development version ran."
    )
    changedInstallations = serializers.SerializerMethodField(
        method_name="get_changed_installations",
        help_text="How many installations re-validation changed (their status or settings).",
    )

    def get_changed_installations(self, result) -> int:
        return len(result.changed)


@service_errors("version", methods=["post"])
class IntegrationVersionReleaseApi(APIView):
    """Release this version again (``rollback``): every installation runs it, development
    installations too until ``dev`` publishes again, and each is re-validated as at a
    publish (scopes, configuration)."""

    @extend_schema(
        summary="Release an older version again (rollback)",
        request=None,
        responses=ReleaseOutput,
    )
    def post(self, request, name, number):
        result = integration_release(
            user=request.user, integration=owned_integration_for(request, name), number=number
        )
        return Response(ReleaseOutput(result).data)


class DevelopmentInput(serializers.Serializer):
    development = serializers.BooleanField(
        help_text="true: the installation runs development versions; false: the released one."
    )


class InstallationDevelopmentApi(InstallationLookup, APIView):
    """Mark an installation as running the integration's development versions, or not:
    admins of the integration's organization, for an installation of an organization they
    administer too (403 for others who see it)."""

    access_actions = {"POST": Action.CONFIGURE}

    @extend_schema(
        summary="Mark an installation as running development versions, or not",
        request=DevelopmentInput,
        responses=InstallationOutput,
        examples=[
            OpenApiExample(
                "Run development versions", value={"development": True}, request_only=True
            ),
            OpenApiExample(
                "Back to the released one", value={"development": False}, request_only=True
            ),
            installation_example(
                "A development installation",
                development=True,
                version={"number": 4, "development": True},
            ),
        ],
    )
    def post(self, request, installation_id):
        installation = self.installation(installation_id)
        data = DevelopmentInput(data=request.data)
        data.is_valid(raise_exception=True)
        installation = installation_mark_development(
            user=request.user,
            installation=installation,
            development=data.validated_data["development"],
        )
        return installation_response(installation)
