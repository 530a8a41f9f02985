"""Connecting ``button`` properties with OAuth (``services.oauth``).

People (admins of the installation's organization: connecting configures it): Connect issues
a state to the caller and answers the URL that starts the flow; Disconnect removes the
credentials. Installation
tokens (the SDK's ``create_oauth_handler``): check a state before going on with the flow, and
complete the flow by writing the credentials with it.
"""

from urllib.parse import urlencode

from drf_spectacular.utils import OpenApiExample, extend_schema, inline_serializer
from rest_framework import serializers, status
from rest_framework.response import Response
from rest_framework.views import APIView

from docplatform.access import Action
from docplatform.api.inputs import TextField

from ..authentication import IsInstallation
from ..services.oauth import (
    oauth_connect_complete,
    oauth_connect_start,
    oauth_disconnect,
    oauth_state_check,
)
from .installation_output import (
    EXAMPLE_IDS,
    InstallationLookup,
    InstallationOutput,
    installation_example,
    installation_response,
)
from .installations import ConfigurationField


class PropertyInput(serializers.Serializer):
    property = serializers.CharField(max_length=100, help_text="A button property's name.")


class StateInput(serializers.Serializer):
    state = serializers.CharField(max_length=2000)


class CompleteInput(StateInput):
    configuration = ConfigurationField(
        help_text="The connected button property's credentials ({access_token, refresh_token, "
        "expires_at}), and any other property values to set along."
    )
    externalIds = serializers.ListField(
        child=TextField(max_length=200), required=False, max_length=100
    )


ConnectOutput = inline_serializer(
    "OAuthConnect",
    {
        "state": serializers.CharField(),
        "url": serializers.URLField(help_text="Open it in the browser to start the flow."),
        "expiresAt": serializers.DateTimeField(),
    },
)
PropertyOutput = inline_serializer("OAuthProperty", {"property": serializers.CharField()})

#: A state as Connect issues it, for the documentation's examples.
STATE_EXAMPLE = (
    ".eJyrVspUslLyyjV3rjAMSnMvMfUrtAiv8i4wcVHSUcoDSlUQAEq1APrQGP0:1xWjmX:"
    "9RNFRLmwxC2ROwYHXZvYUmXrlUL4_PWTSeiQg7cdBfg"
)
BUTTON_EXAMPLE = OpenApiExample("A button property", value={"property": "tasks"}, request_only=True)
#: The examples' installation: oauth-tasks (``examples/``) in an organization.
OAUTH_INSTALLATION = EXAMPLE_IDS["organization_installation"]
OAUTH_ENDPOINT = f"https://integrations.example.com/installations/{OAUTH_INSTALLATION}"


def oauth_installation_example(name: str, **changes) -> OpenApiExample:
    return installation_example(
        name,
        **{
            "id": OAUTH_INSTALLATION,
            "integration": "oauth-tasks",
            "level": "organization",
            "space": None,
            "parent": None,
            "spaceSelection": "all",
            "selectedSpaces": [],
            "scopes": [],
            "publicEndpoint": OAUTH_ENDPOINT,
        }
        | changes,
    )


class OAuthConnectApi(InstallationLookup, APIView):
    """Connect a button property: a single-use state issued to the caller, an admin of the
    installation's organization, and the URL (the property's ``callback_url`` on the
    installation's public endpoint, with ``?state=``) that starts the OAuth flow."""

    access_actions = {"POST": Action.CONFIGURE}

    @extend_schema(
        summary="Start connecting a button property with OAuth",
        request=PropertyInput,
        responses={201: ConnectOutput},
        examples=[
            BUTTON_EXAMPLE,
            OpenApiExample(
                "The flow's start",
                value={
                    "state": STATE_EXAMPLE,
                    "url": f"{OAUTH_ENDPOINT}/oauth?{urlencode({'state': STATE_EXAMPLE})}",
                    "expiresAt": "2026-03-02T09:25:00Z",
                },
                response_only=True,
            ),
        ],
    )
    def post(self, request, installation_id):
        installation = self.installation(installation_id)
        data = PropertyInput(data=request.data)
        data.is_valid(raise_exception=True)
        start = oauth_connect_start(
            user=request.user,
            installation=installation,
            property_name=data.validated_data["property"],
        )
        return Response(
            {"state": start.state, "url": start.url, "expiresAt": start.expires_at},
            status=status.HTTP_201_CREATED,
        )


class OAuthDisconnectApi(InstallationLookup, APIView):
    """Disconnect a button property (admins): its credentials are removed and the setup flow
    runs (``installation_setup`` fires)."""

    access_actions = {"POST": Action.CONFIGURE}

    @extend_schema(
        summary="Disconnect a button property",
        request=PropertyInput,
        responses=InstallationOutput,
        examples=[
            BUTTON_EXAMPLE,
            oauth_installation_example(
                "The installation, pending without its account",
                status="pending",
                ownStatus="pending",
                statusReasons=[{"path": "configuration.tasks", "message": "is required"}],
                configuration={"project": "docs"},
            ),
        ],
    )
    def post(self, request, installation_id):
        installation = self.installation(installation_id)
        data = PropertyInput(data=request.data)
        data.is_valid(raise_exception=True)
        installation = oauth_disconnect(
            user=request.user,
            installation=installation,
            property_name=data.validated_data["property"],
        )
        return installation_response(installation)


class OAuthStateCheckApi(APIView):
    """Installation tokens: whether a flow may go on with this state (issued to a member for
    this installation, unused, unexpired); answers the button property it connects. Nothing
    is written."""

    permission_classes = [IsInstallation]

    @extend_schema(
        summary="Check an OAuth state (installation tokens)",
        request=StateInput,
        responses=PropertyOutput,
        examples=[
            OpenApiExample("A state", value={"state": STATE_EXAMPLE}, request_only=True),
            OpenApiExample(
                "The property it connects", value={"property": "tasks"}, response_only=True
            ),
        ],
    )
    def post(self, request):
        data = StateInput(data=request.data)
        data.is_valid(raise_exception=True)
        name = oauth_state_check(installation=request.auth, state=data.validated_data["state"])
        return Response({"property": name})


class OAuthCompleteApi(APIView):
    """Installation tokens: the end of the flow. The state is used up and the connected
    property's credentials written (the only way a button property is written); the setup
    flow runs."""

    permission_classes = [IsInstallation]

    @extend_schema(
        summary="Complete an OAuth flow with its credentials (installation tokens)",
        request=CompleteInput,
        responses=InstallationOutput,
        examples=[
            OpenApiExample(
                "The credentials",
                value={
                    "state": STATE_EXAMPLE,
                    "configuration": {
                        "tasks": {
                            "access_token": "at_5fQ2xN8rLk1Wm7Zc",
                            "refresh_token": "rt_9Hb3Vy6Pq0Tj4Sd",
                            "expires_at": 1772445600,
                        }
                    },
                },
                request_only=True,
            ),
            OpenApiExample(
                "With a property and external ids",
                value={
                    "state": STATE_EXAMPLE,
                    "configuration": {
                        "tasks": {"access_token": "at_5fQ2xN8rLk1Wm7Zc"},
                        "project": "docs",
                    },
                    "externalIds": ["tracker-user-2214"],
                },
                request_only=True,
            ),
            oauth_installation_example(
                "The installation, connected",
                configuration={"tasks": {"connected": True}, "project": "docs"},
            ),
        ],
    )
    def post(self, request):
        data = CompleteInput(data=request.data)
        data.is_valid(raise_exception=True)
        installation = oauth_connect_complete(
            user=request.user,
            installation=request.auth,
            state=data.validated_data["state"],
            configuration=data.validated_data["configuration"],
            external_ids=data.validated_data.get("externalIds"),
        )
        return installation_response(installation)
