"""An installation token's own installation: read it, edit its configuration and its
external ids (the audit log records the installation as who did it)."""

from drf_spectacular.utils import OpenApiExample, extend_schema
from rest_framework import serializers
from rest_framework.views import APIView

from docplatform.api.inputs import TextField
from docplatform.api.schema import service_errors

from ..authentication import IsInstallation
from ..services.installations import installation_configure
from .installation_output import installation_example
from .installations import ConfigurationField, InstallationOutput, installation_response


class OwnInstallationInput(serializers.Serializer):
    configuration = ConfigurationField(required=False)
    externalIds = serializers.ListField(
        child=TextField(max_length=200), required=False, max_length=100
    )

    def validate(self, attrs):
        if not attrs:
            raise serializers.ValidationError("give configuration, externalIds or both")
        return attrs


@service_errors("configuration", "configuration.KEY", "externalIds", methods=["patch"])
class OwnInstallationApi(APIView):
    """The caller's own installation, for an installation token: read it (credentials are
    never shown), edit its configuration (the setup flow runs) and its external ids."""

    permission_classes = [IsInstallation]

    @extend_schema(
        summary="Get the token's own installation",
        description="The installation whose token makes the request, as its members see it: "
        "credentials are never shown. Installation tokens only (a person gets 403).",
        responses=InstallationOutput,
    )
    def get(self, request):
        return installation_response(request.auth)

    @extend_schema(
        summary="Edit the token's own installation",
        description="`configuration`: the properties to change, by name (`null` unsets one; "
        "button properties are written by the OAuth flow only); the setup flow runs. "
        "`externalIds`: replaces the installation's external ids (what the integration calls "
        "it by elsewhere). Both are written together or neither.",
        request=OwnInstallationInput,
        responses=InstallationOutput,
        examples=[
            OpenApiExample(
                "Write a property",
                value={"configuration": {"digest": "12 pages"}},
                request_only=True,
            ),
            OpenApiExample(
                "Its external ids", value={"externalIds": ["acct_4821"]}, request_only=True
            ),
            installation_example(
                "The installation",
                configuration={"min_words": 50, "digest": "12 pages"},
                externalIds=["acct_4821"],
            ),
        ],
    )
    def patch(self, request):
        data = OwnInstallationInput(data=request.data)
        data.is_valid(raise_exception=True)
        installation = installation_configure(
            user=request.user,
            installation=request.auth,
            changes=data.validated_data.get("configuration"),
            external_ids=data.validated_data.get("externalIds"),
        )
        return installation_response(installation)
