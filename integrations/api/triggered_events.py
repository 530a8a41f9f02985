"""Test events: send an installation a real event of a type it receives, made from the
catalogue's sample payload (``integrations.services.triggered_events``; the command line's
``trigger``). Admins of the installing organization send them; any member lists the types."""

from drf_spectacular.utils import OpenApiExample, extend_schema
from rest_framework import serializers, status
from rest_framework.response import Response
from rest_framework.views import APIView

from docplatform.access import Action
from docplatform.api.inputs import EventTypeField
from docplatform.api.schema import service_errors

from ..services.triggered_events import installation_event_trigger, trigger_event_types
from .deliveries import DeliveryOutput
from .installation_output import InstallationLookup


class TriggerTypesOutput(serializers.Serializer):
    types = serializers.ListField(
        child=serializers.CharField(),
        help_text="The event types a test event to this installation may have: those of its "
        "level whose scope it acts with.",
    )


class TriggerInput(serializers.Serializer):
    type = EventTypeField(help_text="The event type, e.g. space_content_updated.")
    space = serializers.CharField(
        required=False,
        max_length=32,
        help_text="The space a space event happens in (an organization installation: one its "
        "space selection covers; default: the first).",
    )
    site = serializers.CharField(
        required=False,
        max_length=32,
        help_text="The site a site event happens on (an organization installation: one it "
        "reaches; default: the first).",
    )


@service_errors("type", "space", "site", "status")
class InstallationTriggerApi(InstallationLookup, APIView):
    """List the event types a test event may have; send one (admins)."""

    access_actions = {"GET": Action.READ, "POST": Action.SEND_TEST_EVENTS}

    @extend_schema(
        summary="List the event types an installation's test event may have",
        responses=TriggerTypesOutput,
    )
    def get(self, request, installation_id):
        installation = self.installation(installation_id)
        return Response({"types": trigger_event_types(installation)})

    @extend_schema(
        summary="Send an installation a test event",
        description="A real event of the type, with the catalogue's sample payload and the "
        "installation's own space or site, fired to this installation alone through the same "
        "outbox as every event; 201 with its delivery, which settles as any other (follow it "
        "at `deliveries/{id}/`). Admins of the installing organization only (403); a paused or "
        "pending installation is refused (400 naming `status`).",
        request=TriggerInput,
        responses={201: DeliveryOutput},
        examples=[
            OpenApiExample(
                "A content update",
                value={"type": "space_content_updated"},
                request_only=True,
            ),
            OpenApiExample(
                "In a chosen space",
                value={"type": "space_view", "space": "QQaP5Kbe057Ye1ayyC4s"},
                request_only=True,
            ),
        ],
    )
    def post(self, request, installation_id):
        installation = self.installation(installation_id)
        given = TriggerInput(data=request.data)
        given.is_valid(raise_exception=True)
        delivery = installation_event_trigger(
            user=request.user,
            installation=installation,
            event_type=given.validated_data["type"],
            space_id=given.validated_data.get("space"),
            site_id=given.validated_data.get("site"),
        )
        return Response(DeliveryOutput(delivery).data, status=status.HTTP_201_CREATED)
