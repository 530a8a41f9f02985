"""OAuth state for the SDK's ``create_oauth_handler`` (installation tokens only)."""

from drf_spectacular.utils import extend_schema, inline_serializer
from rest_framework import serializers
from rest_framework.response import Response
from rest_framework.views import APIView

from docplatform.api_permissions import IsInstallation

from ..services.oauth import oauth_state_consume, oauth_state_issue


class StateInput(serializers.Serializer):
    property = serializers.CharField(max_length=100)


class ConsumeInput(serializers.Serializer):
    state = serializers.CharField(max_length=2000)


PropertyOutput = inline_serializer("OAuthProperty", {"property": serializers.CharField()})
StateOutput = inline_serializer("OAuthState", {"state": serializers.CharField()})


class OAuthStateApi(APIView):
    """Issue a signed, expiring, single-use state bound to the calling installation."""

    permission_classes = [IsInstallation]

    @extend_schema(request=StateInput, responses={201: StateOutput})
    def post(self, request):
        data = StateInput(data=request.data)
        data.is_valid(raise_exception=True)
        state = oauth_state_issue(
            installation=request.auth, property_name=data.validated_data["property"]
        )
        return Response({"state": state}, status=201)


class OAuthStateConsumeApi(APIView):
    """Check and use up a state; answers the button property it was issued for."""

    permission_classes = [IsInstallation]

    @extend_schema(request=ConsumeInput, responses=PropertyOutput)
    def post(self, request):
        data = ConsumeInput(data=request.data)
        data.is_valid(raise_exception=True)
        name = oauth_state_consume(installation=request.auth, state=data.validated_data["state"])
        return Response({"property": name})
