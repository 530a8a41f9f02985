"""REST API of the webhook integration (``/api/v1/installations/{id}/webhook/...``): a test ping,
the signing secret and the endpoint's state (disabled after failing every attempt for days,
and re-enabling it) of a webhook space or site installation.

Members of the installing organization send pings; only its admins read and rotate the secret
and read and re-enable the endpoint (403 for members). Anyone else gets 404. Another
integration's installation is a 400.
"""

from drf_spectacular.utils import extend_schema
from rest_framework import serializers, status
from rest_framework.response import Response
from rest_framework.views import APIView

from docplatform.api.schema import service_errors
from integrations.api.deliveries import DeliveryOutput
from integrations.api.installations import installation_for

from .selectors import endpoint_state, signing_secrets_in_overlap
from .services.checks import webhook_admin_check, webhook_installation_check
from .services.endpoints import webhook_endpoint_reenable
from .services.ping import webhook_ping_send
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
class WebhookPingApi(APIView):
    """Send a test ping (``{"type": "ping", "eventId", "installationId"}``) to the
    installation's URL; 400 when the installation is paused or not yet active."""

    @extend_schema(
        summary="Send a test ping to a webhook installation's URL",
        request=None,
        responses={202: DeliveryOutput},
    )
    def post(self, request, installation_id):
        delivery = webhook_ping_send(installation=installation_for(request, installation_id))
        return Response(DeliveryOutput(delivery).data, status=status.HTTP_202_ACCEPTED)


@service_errors("installation")
class WebhookSecretApi(APIView):
    """The installation's current signing secret (admins of the organization)."""

    @extend_schema(
        summary="Get a webhook installation's signing secret", responses=SigningSecretOutput
    )
    def get(self, request, installation_id):
        installation = installation_for(request, installation_id)
        secret = webhook_secret_read(user=request.user, installation=installation)
        return signing_secret_response(installation, secret)


@service_errors("installation")
class WebhookSecretRotateApi(APIView):
    """Make a new signing secret (admins); the old one keeps signing for 24 hours, so
    receivers can switch without losing a delivery."""

    @extend_schema(
        summary="Rotate a webhook installation's signing secret",
        request=None,
        responses=SigningSecretOutput,
    )
    def post(self, request, installation_id):
        installation = installation_for(request, installation_id)
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
class WebhookEndpointApi(APIView):
    """The endpoint's state (admins): disabled or not, why, who re-enabled it."""

    @extend_schema(summary="Get a webhook endpoint's state", responses=EndpointOutput)
    def get(self, request, installation_id):
        installation = installation_for(request, installation_id)
        webhook_admin_check(request.user, installation)
        webhook_installation_check(installation)
        return endpoint_response(installation)


@service_errors("installation", "endpoint")
class WebhookEndpointReenableApi(APIView):
    """Re-enable a disabled endpoint (admins): events are delivered to it again from now on;
    400 when it is not disabled."""

    @extend_schema(
        summary="Re-enable a disabled webhook endpoint",
        request=None,
        responses=EndpointOutput,
    )
    def post(self, request, installation_id):
        installation = installation_for(request, installation_id)
        webhook_installation_check(installation)
        webhook_endpoint_reenable(user=request.user, installation=installation)
        return endpoint_response(installation)
