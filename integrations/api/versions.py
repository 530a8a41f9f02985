"""One version of an integration: unpublish it (its owning organization's admins only;
others who may see the integration get 403)."""

from drf_spectacular.utils import extend_schema
from rest_framework import status
from rest_framework.response import Response
from rest_framework.views import APIView

from docplatform.api_schema import service_errors

from ..services import integration_version_unpublish
from .catalogue import owned_integration_for


@service_errors("version", methods=["delete"])
class IntegrationVersionApi(APIView):
    """Remove one version; refused for the version installations run and for the only
    version (unpublish the integration instead)."""

    @extend_schema(responses={204: None})
    def delete(self, request, name, number):
        integration_version_unpublish(
            integration=owned_integration_for(request, name), number=number
        )
        return Response(status=status.HTTP_204_NO_CONTENT)
