"""An installation as the API shows it, and how it is read and checked: one representation
for every endpoint that answers with installations, and one lookup for every endpoint that
acts on one (``InstallationLookup``)."""

from django.http import Http404
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiExample, extend_schema_field
from rest_framework import serializers, status
from rest_framework.response import Response

from docplatform.api.permissions import ActsByRole

from ..endpoint_selectors import (
    SELECTED_SPACES,
    installation_for_call,
    installation_visible_for_call,
    selected_spaces_of,
)
from ..environment import installation_public_endpoint
from ..models import Installation, IntegrationVersion
from ..policies import (
    effective_status,
    installation_scopes,
    is_development,
    new_permissions_notice,
    running_version,
    scopes_awaiting_approval,
)
from ..selectors import shown_configuration


class StatusReasonOutput(serializers.Serializer):
    path = serializers.CharField()
    message = serializers.CharField()


class RunningVersionOutput(serializers.Serializer):
    number = serializers.IntegerField()
    development = serializers.BooleanField(
        help_text="Whether it is a development version (published by dev), not the released one."
    )


class InstallationOutput(serializers.Serializer):
    id = serializers.CharField()
    integration = serializers.CharField(source="integration.name")
    organization = serializers.CharField(source="organization_id")
    level = serializers.ChoiceField(choices=Installation.Level.choices)
    space = serializers.CharField(source="space_id", allow_null=True)
    site = serializers.CharField(source="site_id", allow_null=True)
    parent = serializers.CharField(source="parent_id", allow_null=True)
    status = serializers.SerializerMethodField(
        help_text="The effective status: paused or pending when its organization installation "
        "is (it then receives nothing), else its own."
    )
    statusReasons = serializers.SerializerMethodField(
        method_name="get_status_reasons",
        help_text="Why it is pending (or paused with its organization installation).",
    )
    ownStatus = serializers.ChoiceField(
        choices=Installation.Status.choices,
        source="status",
        help_text="The installation's own status, whatever its organization installation's.",
    )
    configuration = serializers.SerializerMethodField(
        help_text='Property values; a connected button property shows as {"connected": true}.'
    )
    externalIds = serializers.ListField(child=serializers.CharField(), source="external_ids")
    spaceSelection = serializers.SerializerMethodField(
        method_name="get_space_selection",
        help_text="Organization installations only: all spaces, or the selected ones.",
    )
    selectedSpaces = serializers.SerializerMethodField(
        method_name="get_selected_spaces",
        help_text="Organization installations only: the selected spaces' ids.",
    )
    scopes = serializers.SerializerMethodField(
        help_text="The scopes the installation acts with (API access, events): those its "
        "integration asks for that its organization granted."
    )
    scopesAwaitingApproval = serializers.SerializerMethodField(
        method_name="get_scopes_awaiting_approval",
        help_text="New scopes a newer version of the integration asks for; they apply once "
        "an admin of the organization approves them (POST .../approve-scopes/).",
    )
    permissionsNotice = serializers.SerializerMethodField(
        method_name="get_permissions_notice",
        help_text='"asks for new permissions: ..." while scopes await approval, else null.',
    )
    development = serializers.SerializerMethodField(
        help_text="Whether it runs the integration's development versions: marked itself, or "
        "a space or site installation under a marked organization installation."
    )
    version = serializers.SerializerMethodField(
        help_text="The version it runs: the released one, or for a development installation "
        "the one dev published last (null: none)."
    )
    publicEndpoint = serializers.SerializerMethodField(
        method_name="get_public_endpoint",
        help_text="The world-facing URL whose requests reach the integration's fetch.",
    )
    createdAt = serializers.DateTimeField(source="created_at")
    updatedAt = serializers.DateTimeField(source="updated_at")

    def get_development(self, installation) -> bool:
        return is_development(installation)

    @extend_schema_field(RunningVersionOutput(allow_null=True))
    def get_version(self, installation):
        version = running_version(installation.integration, installation)
        if version is None:
            return None
        return {
            "number": version.number,
            # Another organization may run an older, approved version: not a development one.
            "development": version.channel == IntegrationVersion.Channel.DEVELOPMENT,
        }

    def get_public_endpoint(self, installation) -> str:
        return installation_public_endpoint(installation)

    @extend_schema_field(serializers.ChoiceField(choices=Installation.Status.choices))
    def get_status(self, installation) -> str:
        return effective_status(installation).status

    @extend_schema_field(StatusReasonOutput(many=True))
    def get_status_reasons(self, installation) -> list[dict]:
        return effective_status(installation).reasons

    @extend_schema_field(OpenApiTypes.OBJECT)
    def get_configuration(self, installation) -> dict:
        return shown_configuration(installation)

    def get_scopes(self, installation) -> list[str]:
        return installation_scopes(installation)

    def get_scopes_awaiting_approval(self, installation) -> list[str]:
        return scopes_awaiting_approval(installation)

    @extend_schema_field(serializers.CharField(allow_null=True))
    def get_permissions_notice(self, installation):
        return new_permissions_notice(installation)

    @extend_schema_field(
        serializers.ChoiceField(choices=Installation.SpaceSelection.choices, allow_null=True)
    )
    def get_space_selection(self, installation):
        if installation.level != Installation.Level.ORGANIZATION:
            return None
        return installation.space_selection

    @extend_schema_field(serializers.ListField(child=serializers.CharField(), allow_null=True))
    def get_selected_spaces(self, installation):
        if installation.level != Installation.Level.ORGANIZATION:
            return None
        if hasattr(installation, SELECTED_SPACES):  # read with it (``installation_for``)
            return selected_spaces_of(installation)
        return sorted(space.pk for space in installation.selected_spaces.all())


#: Ids the documentation's examples use (20 characters, as ``docplatform.ids`` makes them).
EXAMPLE_IDS = {
    "organization": "Nq4RkT0vXe8bWc2LmZs7",
    "organization_installation": "Hk3Vd9QwPz2Lr6TsYb0M",
    "installation": "Jm7Cx1RfGt5Nq8WzKp4D",
    "space": "QQaP5Kbe057Ye1ayyC4s",
    "other_space": "Tb6Wn2Ye9Kc4Rs1Lm8Xq",
    "site": "Ds2Lp8Mx4Vq7Rb1Tz6Kc",
}

#: A space installation of event-reactor as the API answers it, for the documentation.
INSTALLATION_EXAMPLE = {
    "id": EXAMPLE_IDS["installation"],
    "integration": "event-reactor",
    "organization": EXAMPLE_IDS["organization"],
    "level": "space",
    "space": EXAMPLE_IDS["space"],
    "site": None,
    "parent": EXAMPLE_IDS["organization_installation"],
    "status": "active",
    "statusReasons": [],
    "ownStatus": "active",
    "configuration": {"min_words": 50},
    "externalIds": [],
    "spaceSelection": None,
    "selectedSpaces": None,
    "scopes": ["space:content:read"],
    "scopesAwaitingApproval": [],
    "permissionsNotice": None,
    "development": False,
    "version": {"number": 3, "development": False},
    "publicEndpoint": "https://integrations.example.com/installations/"
    + EXAMPLE_IDS["installation"],
    "createdAt": "2026-03-02T09:15:00Z",
    "updatedAt": "2026-03-02T09:15:04Z",
}


def installation_example(name: str = "An installation", **changes) -> OpenApiExample:
    """A response example: ``INSTALLATION_EXAMPLE`` with ``changes``."""
    return OpenApiExample(name, value=INSTALLATION_EXAMPLE | changes, response_only=True)


#: The versions an installation may run, read with it (without their code and listing).
_VERSIONS = (
    "integration__released_version",
    "integration__development_version",
    "integration__shared_version",
)


def installation_rows(queryset):
    return (
        queryset.select_related(*_VERSIONS, "parent")
        .defer(*(f"{version}__{field}" for version in _VERSIONS for field in ("bundle", "listing")))
        .prefetch_related("selected_spaces")
    )


def installation_for(request, installation_id: str) -> Installation:
    """The installation, when the caller may see it (404 otherwise), read as for a call: in
    one statement compiled once, with the caller's role, which the role check then reads no
    more (an ORM query built per request cost the API's read 5 ms)."""
    installation = installation_visible_for_call(request.user, installation_id)
    if installation is None:
        raise Http404("no such installation")
    return installation


class InstallationLookup:
    """For views acting on one installation: each method's action in ``access_actions``
    (the roles' table, ``docplatform.access``), checked by ``ActsByRole`` once the
    installation is found among the caller's organizations' (404 for anyone else): 403
    naming who may for a member whose role does not allow it, before anything is read or
    written. The services check the same rule again for their other doors."""

    permission_classes = [ActsByRole]

    def installation(self, installation_id: str) -> Installation:
        installation = installation_for(self.request, installation_id)
        self.check_object_permissions(self.request, installation)
        return installation


def fresh(installation: Installation) -> Installation:
    """The installation as stored now, ready to be shown."""
    return installation_for_call(installation.pk)


def installation_response(installation: Installation, status_code=status.HTTP_200_OK):
    return Response(InstallationOutput(fresh(installation)).data, status=status_code)
