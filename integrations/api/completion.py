"""Options of a configuration property with a ``completion_url``, asked of the integration."""

from drf_spectacular.utils import extend_schema, inline_serializer
from rest_framework import serializers
from rest_framework.response import Response
from rest_framework.views import APIView

from docplatform.access import Action
from docplatform.api.schema import service_errors

from ..gateway.failures import RuntimeFailure
from ..services.completion import completion_options
from .failures import failure_response
from .installation_output import InstallationLookup

OptionsOutput = inline_serializer(
    "CompletionOptions",
    {
        "options": inline_serializer(
            "CompletionOption",
            {"value": serializers.CharField(), "label": serializers.CharField()},
            many=True,
        )
    },
)


@service_errors("property")
class CompletionOptionsApi(InstallationLookup, APIView):
    """The options the integration offers for a ``string`` property with a ``completion_url``
    (400 for a property without one; 502, 503 or 504 when the integration gives no valid
    options, 503 while the installation is paused). Any member of the organization: the
    options fill in a form, they change nothing."""

    access_actions = {"GET": Action.READ}

    @extend_schema(
        summary="List the options a configuration property offers",
        responses={200: OptionsOutput},
    )
    def get(self, request, installation_id, property_name):
        installation = self.installation(installation_id)
        try:
            options = completion_options(installation=installation, property_name=property_name)
        except RuntimeFailure as failure:
            return failure_response(failure)
        return Response({"options": options})
