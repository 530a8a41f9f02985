"""One installation and its setup flow: read, configure, select spaces, pause, resume,
approve new scopes, uninstall; and the inputs the installing endpoints share with them
(``ConfigurationField``, ``organization_spaces``).

Members of the installing organization (any role) see its installations; its admins
configure, pause, resume, approve and uninstall them (the roles' table, ``docplatform.access``:
403 naming who may for its members and readers); anyone else gets 404. Installing (the lists
of an organization's, a space's or a site's installations, and installing into them) is in
``installing``, their deliveries in ``deliveries``, an installation token's own installation
in ``own_installation``.
"""

from django.core.exceptions import ValidationError
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiExample, extend_schema
from rest_framework import serializers, status
from rest_framework.response import Response
from rest_framework.views import APIView

from docplatform.access import Action
from docplatform.api.errors import renamed_error_fields
from docplatform.api.schema import service_errors
from docplatform.models import Space

from ..models import Installation
from ..selectors import organization_spaces_with_ids
from ..services.consent import installation_scopes_approve
from ..services.installations import (
    installation_configure,
    installation_pause,
    installation_resume,
    installation_select_spaces,
    installation_uninstall,
)
from .installation_output import (
    EXAMPLE_IDS,
    InstallationLookup,
    InstallationOutput,
    installation_example,
    installation_response,
)

#: The service's field names as the API spells them.
API_FIELD_NAMES = {"space_selection": "spaceSelection", "selected_spaces": "selectedSpaces"}


# --- Inputs ---------------------------------------------------------------------------------


class ConfigurationField(serializers.DictField):
    """Property values by name, as the manifest's configuration defines them."""

    def __init__(self, **kwargs):
        super().__init__(allow_empty=False, **kwargs)


class SpaceSelectionInput(serializers.Serializer):
    spaceSelection = serializers.ChoiceField(choices=Installation.SpaceSelection.choices)
    selectedSpaces = serializers.ListField(
        child=serializers.CharField(max_length=32), required=False, default=list, max_length=1000
    )


def organization_spaces(organization, space_ids: list[str]) -> list[Space]:
    """The organization's spaces with these ids; a field error names any other id."""
    spaces = organization_spaces_with_ids(organization, space_ids)
    unknown = sorted(set(space_ids) - {space.pk for space in spaces})
    if unknown:
        raise ValidationError(
            {"selectedSpaces": [f"no space of this organization has the id {', '.join(unknown)}"]}
        )
    return spaces


# --- One installation -----------------------------------------------------------------------


class InstallationDetailApi(InstallationLookup, APIView):
    """An installation (GET); uninstall it (DELETE, admins: an organization installation
    takes the space and site installations under it along)."""

    access_actions = {"GET": Action.READ, "DELETE": Action.UNINSTALL}

    @extend_schema(
        summary="Get an installation",
        description="An installation of one of the caller's organizations (any role); its "
        "credentials are never shown (a connected button property reads "
        '`{"connected": true}`).',
        responses=InstallationOutput,
    )
    def get(self, request, installation_id):
        return Response(InstallationOutput(self.installation(installation_id)).data)

    @extend_schema(
        summary="Uninstall an installation",
        description="Removes the installation, its configuration and credentials; an "
        "organization installation takes the space and site installations under it along. "
        "The organization's admins only (403).",
        responses={204: None},
    )
    def delete(self, request, installation_id):
        installation_uninstall(user=request.user, installation=self.installation(installation_id))
        return Response(status=status.HTTP_204_NO_CONTENT)


@service_errors("configuration.KEY")
@service_errors("configuration", codes=("invalid", "empty", "not_a_dict", "null"))
class InstallationConfigurationApi(InstallationLookup, APIView):
    """Edit one or more configuration properties (``null`` unsets one), admins only; runs
    the setup flow: ``active`` when the configuration validates, else ``pending`` with the
    reasons."""

    access_actions = {"PATCH": Action.CONFIGURE}

    @extend_schema(
        summary="Edit an installation's configuration",
        description="The body is the properties to change, by name (not wrapped in "
        "`configuration`); `null` unsets one, properties left out keep their value. The setup "
        "flow runs: `active` when the whole configuration validates, else `pending` with the "
        "reasons; a value the manifest refuses is a 400 naming `configuration.<property>`. "
        "The organization's admins only (403).",
        request=OpenApiTypes.OBJECT,
        responses=InstallationOutput,
        examples=[
            OpenApiExample("Set a property", value={"min_words": 80}, request_only=True),
            OpenApiExample(
                "Set one, unset another",
                value={"min_words": 120, "digest": None},
                request_only=True,
            ),
            installation_example("The installation", configuration={"min_words": 80}),
        ],
    )
    def patch(self, request, installation_id):
        installation = self.installation(installation_id)
        try:
            changes = ConfigurationField().run_validation(request.data)
        except serializers.ValidationError as error:
            raise serializers.ValidationError({"configuration": error.detail}) from error
        installation = installation_configure(
            user=request.user, installation=installation, changes=changes
        )
        return installation_response(installation)


@service_errors("spaceSelection", "selectedSpaces")
class InstallationSpaceSelectionApi(InstallationLookup, APIView):
    """Which spaces an organization installation covers: all, or the selected ones (admins)."""

    access_actions = {"PUT": Action.CONFIGURE}

    @extend_schema(
        summary="Choose the spaces an organization installation covers",
        description="`all` (every space, those made later too) or `selected` with the "
        "`selectedSpaces` ids, which must be the organization's spaces. Organization "
        "installations only (a space or site installation is a 400).",
        request=SpaceSelectionInput,
        responses=InstallationOutput,
        examples=[
            OpenApiExample(
                "Two spaces",
                value={
                    "spaceSelection": "selected",
                    "selectedSpaces": [EXAMPLE_IDS["space"], EXAMPLE_IDS["other_space"]],
                },
                request_only=True,
            ),
            OpenApiExample("Every space", value={"spaceSelection": "all"}, request_only=True),
            installation_example(
                "The organization installation",
                id=EXAMPLE_IDS["organization_installation"],
                level="organization",
                space=None,
                parent=None,
                spaceSelection="selected",
                selectedSpaces=[EXAMPLE_IDS["space"], EXAMPLE_IDS["other_space"]],
            ),
        ],
    )
    def put(self, request, installation_id):
        installation = self.installation(installation_id)
        data = SpaceSelectionInput(data=request.data)
        data.is_valid(raise_exception=True)
        spaces = organization_spaces(
            installation.organization_id, data.validated_data["selectedSpaces"]
        )
        with renamed_error_fields(**API_FIELD_NAMES):
            installation = installation_select_spaces(
                user=request.user,
                installation=installation,
                space_selection=data.validated_data["spaceSelection"],
                spaces=spaces,
            )
        return installation_response(installation)


class InstallationPauseApi(InstallationLookup, APIView):
    """Pause (admins): no events and no deliveries reach the installation until it is
    resumed."""

    access_actions = {"POST": Action.PAUSE}

    @extend_schema(
        summary="Pause an installation",
        request=None,
        responses=InstallationOutput,
        examples=[installation_example("Paused", status="paused", ownStatus="paused")],
    )
    def post(self, request, installation_id):
        installation = installation_pause(
            user=request.user, installation=self.installation(installation_id)
        )
        return installation_response(installation)


class InstallationResumeApi(InstallationLookup, APIView):
    """Resume (admins): the configuration is validated again, into ``active`` or
    ``pending``."""

    access_actions = {"POST": Action.PAUSE}

    @extend_schema(
        summary="Resume a paused installation",
        request=None,
        responses=InstallationOutput,
    )
    def post(self, request, installation_id):
        installation = installation_resume(
            user=request.user, installation=self.installation(installation_id)
        )
        return installation_response(installation)


class ScopesApprovalInput(serializers.Serializer):
    scopes = serializers.ListField(
        child=serializers.CharField(max_length=100),
        required=False,
        allow_empty=False,
        max_length=100,
        help_text="Approve only these of the scopes awaiting approval (default: all of them).",
    )


@service_errors("scopes")
class InstallationScopesApproveApi(InstallationLookup, APIView):
    """An admin of the organization grants the new scopes the integration asks for (all, or
    ``scopes``): they apply to this installation, its organization installation and the
    installations under it at once, and each gets ``installation_setup``. Members and
    readers: 403."""

    access_actions = {"POST": Action.APPROVE_SCOPES}

    @extend_schema(
        summary="Approve the new scopes an integration asks for",
        request=ScopesApprovalInput,
        responses=InstallationOutput,
        examples=[
            OpenApiExample("All of them", value={}, request_only=True),
            OpenApiExample(
                "Some of them", value={"scopes": ["space:content:write"]}, request_only=True
            ),
            installation_example(
                "The installation, acting with them",
                scopes=["space:content:read", "space:content:write"],
            ),
        ],
    )
    def post(self, request, installation_id):
        installation = self.installation(installation_id)
        data = ScopesApprovalInput(data=request.data)
        data.is_valid(raise_exception=True)
        installation = installation_scopes_approve(
            user=request.user, installation=installation, scopes=data.validated_data.get("scopes")
        )
        return installation_response(installation)
