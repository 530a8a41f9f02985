"""Options of a configuration property with a ``completion_url``, asked of the integration."""

from drf_spectacular.utils import extend_schema, inline_serializer
from rest_framework import serializers, status
from rest_framework.response import Response
from rest_framework.views import APIView

from ..services.completion import CompletionUnavailable, completion_options
from .installations import installation_for

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


def integration_failed(message: str) -> Response:
    """502 in the API's error shape: the integration, not the platform, failed."""
    error = {"code": "integration_failed", "detail": message, "attr": None}
    return Response({"type": "server_error", "errors": [error]}, status=status.HTTP_502_BAD_GATEWAY)


class CompletionOptionsApi(APIView):
    """The options the integration offers for a ``string`` property with a ``completion_url``
    (400 for a property without one; 502 when the integration gives no valid options)."""

    @extend_schema(responses={200: OptionsOutput})
    def get(self, request, installation_id, property_name):
        installation = installation_for(request, installation_id)
        try:
            options = completion_options(installation=installation, property_name=property_name)
        except CompletionUnavailable as error:
            return integration_failed(str(error))
        return Response({"options": options})
