"""REST API of the webhook integration (``/api/v1/installations/{id}/webhook/...``): a test ping,
the signing secret and the endpoint's state (disabled after failing every attempt for days,
and re-enabling it) of a webhook space or site installation.

Everything about an endpoint is for the installing organization's admins (the roles' table,
``docplatform.access``): pings, the secret and its rotation, the endpoint's state and
re-enabling it, replays (403 naming who may for its members and readers). Anyone else gets
404. Another integration's installation is a 400.
"""

from django.http import Http404
from drf_spectacular.utils import OpenApiExample, extend_schema
from rest_framework import serializers, status
from rest_framework.response import Response
from rest_framework.views import APIView

from docplatform.access import Action
from docplatform.api.schema import service_errors
from integrations.api.deliveries import DeliveryOutput
from integrations.api.installation_output import InstallationLookup

from .selectors import (
    endpoint_state,
    installation_replay,
    replay_progress,
    replays,
    signing_secrets_in_overlap,
)
from .services.checks import webhook_installation_check
from .services.endpoints import webhook_endpoint_reenable
from .services.ping import webhook_ping_send
from .services.replay import replay_cancel, replay_request
from .services.signing_secrets import webhook_secret_read, webhook_secret_rotate
from .transport.signatures import SERVICE, STANDARD_WEBHOOKS, signature_scheme


class PreviousSecretOutput(serializers.Serializer):
    createdAt = serializers.DateTimeField(source="created_at")
    expiresAt = serializers.DateTimeField(source="expires_at")


class SigningSecretOutput(serializers.Serializer):
    secret = serializers.CharField(
        help_text="The current signing secret, as the endpoint's signature scheme takes it: "
        "for `service`, its UTF-8 bytes are the HMAC-SHA256 key; for `standard-webhooks`, "
        "`whsec_` + the key's standard base64, as Standard Webhooks libraries decode it."
    )
    signature = serializers.ChoiceField(
        choices=[SERVICE, STANDARD_WEBHOOKS],
        help_text="The endpoint's signature scheme (its configuration's `signature`).",
    )
    previous = PreviousSecretOutput(
        many=True,
        help_text="Rotated-out secrets that still sign until they expire (24 hours after the "
        "rotation); their values are never shown.",
    )


def signing_secret_response(installation, secret: str) -> Response:
    shown = {
        "secret": secret,
        "signature": signature_scheme(installation.configuration),
        "previous": signing_secrets_in_overlap(installation),
    }
    return Response(SigningSecretOutput(shown).data)


@service_errors("installation")
class WebhookPingApi(InstallationLookup, APIView):
    """Send a test ping (``{"type": "ping", "eventId", "installationId"}``) to the
    installation's URL (admins); 400 when the installation is paused or not yet active."""

    access_actions = {"POST": Action.PING}

    @extend_schema(
        summary="Send a test ping to a webhook installation's URL",
        request=None,
        responses={202: DeliveryOutput},
    )
    def post(self, request, installation_id):
        delivery = webhook_ping_send(
            user=request.user, installation=self.installation(installation_id)
        )
        return Response(DeliveryOutput(delivery).data, status=status.HTTP_202_ACCEPTED)


@service_errors("installation")
class WebhookSecretApi(InstallationLookup, APIView):
    """The installation's current signing secret (admins of the organization)."""

    access_actions = {"GET": Action.ROTATE_SECRET}

    @extend_schema(
        summary="Get a webhook installation's signing secret", responses=SigningSecretOutput
    )
    def get(self, request, installation_id):
        installation = self.installation(installation_id)
        secret = webhook_secret_read(user=request.user, installation=installation)
        return signing_secret_response(installation, secret)


@service_errors("installation")
class WebhookSecretRotateApi(InstallationLookup, APIView):
    """Make a new signing secret (admins); the old one keeps signing for 24 hours, so
    receivers can switch without losing a delivery."""

    access_actions = {"POST": Action.ROTATE_SECRET}

    @extend_schema(
        summary="Rotate a webhook installation's signing secret",
        request=None,
        responses=SigningSecretOutput,
    )
    def post(self, request, installation_id):
        installation = self.installation(installation_id)
        secret = webhook_secret_rotate(user=request.user, installation=installation)
        return signing_secret_response(installation, secret)


class EndpointOutput(serializers.Serializer):
    disabled = serializers.BooleanField(
        help_text="True while no event is delivered: every attempt failed for days."
    )
    disabledAt = serializers.DateTimeField(allow_null=True, help_text="When it was disabled.")
    reason = serializers.CharField(help_text="Why it was (last) disabled; empty if never.")
    reenabledAt = serializers.DateTimeField(allow_null=True)
    reenabledBy = serializers.CharField(allow_null=True, help_text="The username.")


def endpoint_response(installation) -> Response:
    state = endpoint_state(installation)
    return Response(
        EndpointOutput(
            {
                "disabled": bool(state and state.is_disabled),
                "disabledAt": state.disabled_at if state else None,
                "reason": state.disabled_reason if state else "",
                "reenabledAt": state.reenabled_at if state else None,
                "reenabledBy": (
                    state.reenabled_by.get_username() if state and state.reenabled_by else None
                ),
            }
        ).data
    )


@service_errors("installation")
class WebhookEndpointApi(InstallationLookup, APIView):
    """The endpoint's state (admins): disabled or not, why, who re-enabled it."""

    access_actions = {"GET": Action.READ_LOGS}

    @extend_schema(summary="Get a webhook endpoint's state", responses=EndpointOutput)
    def get(self, request, installation_id):
        installation = self.installation(installation_id)
        webhook_installation_check(installation)
        return endpoint_response(installation)


@service_errors("installation", "endpoint")
class WebhookEndpointReenableApi(InstallationLookup, APIView):
    """Re-enable a disabled endpoint (admins): events are delivered to it again from now on;
    400 when it is not disabled."""

    access_actions = {"POST": Action.PAUSE}

    @extend_schema(
        summary="Re-enable a disabled webhook endpoint",
        request=None,
        responses=EndpointOutput,
    )
    def post(self, request, installation_id):
        installation = self.installation(installation_id)
        webhook_installation_check(installation)
        webhook_endpoint_reenable(user=request.user, installation=installation)
        return endpoint_response(installation)


# --- Replays ----------------------------------------------------------------------------------


class ReplayInput(serializers.Serializer):
    since = serializers.DateTimeField(help_text="Events fired at or after this (ISO 8601).")
    until = serializers.DateTimeField(
        help_text="Events fired before this (at most now); after `since`, within the "
        "retention period (`WEBHOOK_RETENTION_DAYS`)."
    )
    includeDelivered = serializers.BooleanField(
        default=False,
        help_text="Also send the events the endpoint got (with their original eventIds).",
    )


class ReplayOutput(serializers.Serializer):
    id = serializers.IntegerField()
    status = serializers.ChoiceField(
        choices=["queued", "running", "done", "cancelled", "stopped"],
        help_text="`stopped`: the broker was down; asking again goes on where it stopped.",
    )
    since = serializers.DateTimeField()
    until = serializers.DateTimeField()
    includeDelivered = serializers.BooleanField(source="include_delivered")
    matched = serializers.IntegerField(
        help_text="Events of the range to send; more than `found` past `WEBHOOK_REPLAY_LIMIT`."
    )
    found = serializers.IntegerField(help_text="Events chosen (the oldest first).")
    queued = serializers.IntegerField(help_text="Of those, how many were handled so far.")
    skipped = serializers.IntegerField(
        help_text="Delivered or in progress when their turn came: not sent."
    )
    succeeded = serializers.IntegerField(help_text="Deliveries it queued that succeeded.")
    failed = serializers.IntegerField()
    cancelled = serializers.IntegerField()
    open = serializers.IntegerField(help_text="Deliveries it queued still being sent.")
    requestedBy = serializers.CharField(source="requested_by", allow_null=True)
    createdAt = serializers.DateTimeField(source="created_at")
    finishedAt = serializers.DateTimeField(source="finished_at", allow_null=True)


REPLAY_EXAMPLE = {
    "id": 7,
    "status": "running",
    "since": "2026-03-02T09:00:00Z",
    "until": "2026-03-02T10:00:00Z",
    "includeDelivered": False,
    "matched": 240,
    "found": 240,
    "queued": 100,
    "skipped": 0,
    "succeeded": 98,
    "failed": 0,
    "cancelled": 0,
    "open": 2,
    "requestedBy": "ada",
    "createdAt": "2026-03-02T10:05:00Z",
    "finishedAt": None,
}


def replay_response(job, status_code=status.HTTP_200_OK) -> Response:
    return Response(ReplayOutput(replay_progress(job)).data, status=status_code)


class ReplayLookup(InstallationLookup):
    """The webhook installation, for an admin of its organization (403 for its other people):
    reading replays is reading its deliveries, asking for one or cancelling it replays."""

    access_actions = {"GET": Action.READ_LOGS, "POST": Action.REPLAY}

    def webhook_installation(self, installation_id):
        installation = self.installation(installation_id)
        webhook_installation_check(installation)
        return installation


@service_errors("installation", "status", "endpoint")
class WebhookReplaysApi(ReplayLookup, APIView):
    """A webhook endpoint's replays (admins): GET lists them, newest first; POST sends the
    endpoint the events of a time range that it should have received (by its event selection
    and its space or site) and did not get (it was paused or disabled: no delivery, or one
    cancelled or failed), each once, or with `includeDelivered` every one of them. Each event
    carries the eventId of its delivery to the endpoint (a stable one for an event it never
    had a delivery of: a second replay of the range sends the same eventIds). At most
    `WEBHOOK_REPLAY_LIMIT` events (the oldest first), queued `WEBHOOK_REPLAY_BATCH` at a time
    by a task; one replay at a time per endpoint."""

    @extend_schema(
        summary="List a webhook endpoint's replays",
        responses=ReplayOutput(many=True),
        examples=[OpenApiExample("One replay", value=REPLAY_EXAMPLE, response_only=True)],
    )
    def get(self, request, installation_id):
        installation = self.webhook_installation(installation_id)
        jobs = replays(installation)[:50]
        return Response(ReplayOutput([replay_progress(job) for job in jobs], many=True).data)

    @extend_schema(
        summary="Replay a time range of events to a webhook endpoint",
        request=ReplayInput,
        responses={202: ReplayOutput},
        examples=[
            OpenApiExample(
                "What it missed in an hour",
                value={"since": "2026-03-02T09:00:00Z", "until": "2026-03-02T10:00:00Z"},
                request_only=True,
            ),
            OpenApiExample(
                "Everything of an hour",
                value={
                    "since": "2026-03-02T09:00:00Z",
                    "until": "2026-03-02T10:00:00Z",
                    "includeDelivered": True,
                },
                request_only=True,
            ),
            OpenApiExample(
                "The replay",
                value=REPLAY_EXAMPLE | {"status": "queued", "queued": 0, "succeeded": 0},
                response_only=True,
                status_codes=["202"],
            ),
        ],
    )
    def post(self, request, installation_id):
        installation = self.webhook_installation(installation_id)
        given = ReplayInput(data=request.data)
        given.is_valid(raise_exception=True)
        job = replay_request(
            user=request.user,
            installation=installation,
            since=given.validated_data["since"],
            until=given.validated_data["until"],
            include_delivered=given.validated_data["includeDelivered"],
        )
        return replay_response(job, status.HTTP_202_ACCEPTED)


def replay_for(installation, replay_id):
    job = installation_replay(installation, replay_id)
    if job is None:
        raise Http404("No such replay.")
    return job


@service_errors("installation")
class WebhookReplayApi(ReplayLookup, APIView):
    """One replay of a webhook endpoint (admins): its status and progress."""

    @extend_schema(
        summary="Get a webhook endpoint's replay",
        responses=ReplayOutput,
        examples=[OpenApiExample("A replay", value=REPLAY_EXAMPLE, response_only=True)],
    )
    def get(self, request, installation_id, replay_id):
        installation = self.webhook_installation(installation_id)
        return replay_response(replay_for(installation, replay_id))


@service_errors("installation", "status")
class WebhookReplayCancelApi(ReplayLookup, APIView):
    """Cancel a replay (admins): no further event is queued, and what it queued that is still
    waiting is cancelled; 400 (`status`) when it is finished."""

    @extend_schema(
        summary="Cancel a webhook endpoint's replay",
        request=None,
        responses=ReplayOutput,
        examples=[
            OpenApiExample(
                "Cancelled",
                value=REPLAY_EXAMPLE
                | {"status": "cancelled", "finishedAt": "2026-03-02T10:06:00Z"},
                response_only=True,
            )
        ],
    )
    def post(self, request, installation_id, replay_id):
        installation = self.webhook_installation(installation_id)
        job = replay_cancel(
            user=request.user, installation=installation, job=replay_for(installation, replay_id)
        )
        return replay_response(job)
