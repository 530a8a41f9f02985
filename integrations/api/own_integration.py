"""An integration token's own integration: the installations it acts on (every installation
of the integration, in every organization, none paused), each as its members see it."""

from drf_spectacular.utils import extend_schema
from rest_framework.response import Response
from rest_framework.views import APIView

from ..authentication import IsIntegration
from ..models import Installation
from .installation_output import InstallationOutput, installation_rows


class OwnIntegrationInstallationsApi(APIView):
    """The installations an integration token acts on."""

    permission_classes = [IsIntegration]

    @extend_schema(
        summary="List the integration token's installations",
        description="Every installation of the integration whose token makes the request, in "
        "every organization, but paused ones; each as its members see it (credentials are "
        "never shown). The token acts on each within that installation's granted scopes. "
        "Integration tokens only (others get 403).",
        responses=InstallationOutput(many=True),
    )
    def get(self, request):
        ids = [installation.pk for installation in request.user.installations()]
        rows = installation_rows(Installation.objects.filter(pk__in=ids)).order_by(
            "organization_id", "level", "created_at"
        )
        return Response(InstallationOutput(rows, many=True).data)
