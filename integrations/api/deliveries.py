"""The deliveries to installations: list an installation's deliveries, read one with its
attempt log, send a finished one again.

The installing organization's admins read its installations' deliveries and send them again
(the roles' table: 403 naming who may for its members and readers); anyone else gets 404.
"""

from django.shortcuts import get_object_or_404
from drf_spectacular.utils import extend_schema
from rest_framework import generics, serializers, status
from rest_framework.response import Response
from rest_framework.views import APIView

from docplatform.access import Action
from docplatform.api.inputs import EventTypeField, QueryParameters
from docplatform.api.pagination import NewestFirstCursorPagination
from docplatform.api.permissions import ActsByRole
from docplatform.api.schema import service_errors
from docplatform.events.models import Delivery
from docplatform.events.registry import consumer_names

from ..selectors import deliveries_visible_to
from ..services.deliveries import installation_delivery_redeliver
from .installation_output import InstallationLookup

# --- Representations ------------------------------------------------------------------------


class DeliveryOutput(serializers.Serializer):
    id = serializers.IntegerField()
    eventId = serializers.UUIDField(source="event_uuid", help_text="The payload's eventId.")
    type = serializers.CharField(source="event.type")
    test = serializers.BooleanField(
        source="event.test",
        help_text="A sample event's delivery (`trigger`, Send test event): made-up data, sent "
        "to this installation alone.",
    )
    installation = serializers.CharField(source="installation_id")
    consumer = serializers.ChoiceField(choices=consumer_names())
    status = serializers.ChoiceField(choices=Delivery.Status.choices)
    chain = serializers.IntegerField(help_text="1, and one more for each manual redelivery.")
    attempts = serializers.IntegerField(help_text="Attempts in the current chain.")
    outcome = serializers.CharField()
    lastError = serializers.CharField(source="last_error")
    nextAttemptAt = serializers.DateTimeField(
        source="next_attempt_at", allow_null=True, help_text="When a retrying delivery retries."
    )
    createdAt = serializers.DateTimeField(source="created_at")
    completedAt = serializers.DateTimeField(source="completed_at", allow_null=True)


class DeliveryAttemptOutput(serializers.Serializer):
    chain = serializers.IntegerField()
    number = serializers.IntegerField(help_text="1 for the first attempt of its chain.")
    startedAt = serializers.DateTimeField(source="started_at")
    durationMs = serializers.IntegerField(source="duration_ms")
    statusCode = serializers.IntegerField(source="status_code", allow_null=True)
    error = serializers.CharField(help_text="A network error or a refused URL, if any.")
    outcome = serializers.CharField(help_text="succeeded, retry, failed or refused.")
    responseHeaders = serializers.DictField(
        child=serializers.CharField(), source="response_headers"
    )
    responseBody = serializers.CharField(
        source="response_body", help_text="The first 1 KB of the response body."
    )
    nextDelay = serializers.FloatField(
        source="next_delay", allow_null=True, help_text="Seconds until the retry it scheduled."
    )


class DeliveryDetailOutput(DeliveryOutput):
    attemptLog = DeliveryAttemptOutput(
        many=True,
        source="attempts_log",
        help_text="Each HTTP attempt of a webhook delivery, every chain; runtime deliveries "
        "log none.",
    )


# --- Endpoints ------------------------------------------------------------------------------


class DeliveryFilter(QueryParameters):
    status = serializers.ChoiceField(choices=Delivery.Status.values, required=False)
    type = EventTypeField(
        required=False, help_text="The event type, e.g. ping.", source="event__type"
    )


class InstallationDeliveriesApi(InstallationLookup, generics.ListAPIView):
    """The deliveries to an installation, newest first (admins)."""

    queryset = Delivery.objects.none()
    serializer_class = DeliveryOutput
    pagination_class = NewestFirstCursorPagination
    access_actions = {"GET": Action.READ_LOGS}

    @extend_schema(
        summary="List an installation's deliveries",
        description="The deliveries to the installation, newest first, optionally of one "
        "`status` or event `type`; each delivery's attempts are in its own detail. Paged by "
        "cursor: `next` and `previous` link the older and newer pages, null at either end.",
        parameters=[DeliveryFilter],
    )
    def get(self, request, *args, **kwargs):
        return super().get(request, *args, **kwargs)

    def get_queryset(self):
        installation = self.installation(self.kwargs["installation_id"])
        query = DeliveryFilter(data=self.request.query_params)
        query.is_valid(raise_exception=True)
        return installation.deliveries.filter(**query.validated_data).select_related("event")


class DeliveryLookup:
    """For views acting on one delivery: found among the caller's organizations' (404
    otherwise), then checked against its installation (``ActsByRole``, ``access_actions``)."""

    permission_classes = [ActsByRole]

    def delivery(self, delivery_id: int) -> Delivery:
        deliveries = deliveries_visible_to(self.request.user).select_related(
            "event", "installation"
        )
        delivery = get_object_or_404(deliveries, pk=delivery_id)
        self.check_object_permissions(self.request, delivery.installation)
        return delivery


class DeliveryDetailApi(DeliveryLookup, APIView):
    """One delivery to an installation of one of the caller's organizations, with its
    attempt log (admins)."""

    access_actions = {"GET": Action.READ_LOGS}

    @extend_schema(summary="Get a delivery with its attempt log", responses=DeliveryDetailOutput)
    def get(self, request, delivery_id):
        return Response(DeliveryDetailOutput(self.delivery(delivery_id)).data)


@service_errors("status")
class DeliveryRedeliverApi(DeliveryLookup, APIView):
    """Send a finished delivery again (admins): the same eventId, a new chain of attempts. A
    delivery still in progress (pending or retrying) is refused."""

    access_actions = {"POST": Action.REDELIVER}

    @extend_schema(
        summary="Send a finished delivery again",
        request=None,
        responses={202: DeliveryOutput},
    )
    def post(self, request, delivery_id):
        delivery = installation_delivery_redeliver(
            user=request.user, delivery=self.delivery(delivery_id)
        )
        return Response(DeliveryOutput(delivery).data, status=status.HTTP_202_ACCEPTED)
