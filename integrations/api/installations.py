"""Installations and their setup flow: install, read, configure, select spaces, pause,
resume, approve new scopes, uninstall.

Members of the installing organization (any role) see and manage its installations; anyone
else gets 404. Installing acts for the caller's own organization only, under the visibility
rules of ``installation_create``. Their deliveries are in ``deliveries``, an installation
token's own installation in ``own_installation``.
"""

from django.core.exceptions import ValidationError
from django.http import Http404
from django.shortcuts import get_object_or_404
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import extend_schema, extend_schema_field
from rest_framework import generics, serializers, status
from rest_framework.response import Response
from rest_framework.views import APIView

from docplatform.api import organization_for
from docplatform.api_errors import renamed_error_fields
from docplatform.api_inputs import QueryParameters
from docplatform.api_schema import service_errors
from docplatform.models import Space
from docplatform.selectors import sites_visible_to, spaces_visible_to

from ..environment import installation_public_endpoint
from ..models import Installation
from ..policies import (
    effective_status,
    installation_scopes,
    new_permissions_notice,
    scopes_awaiting_approval,
)
from ..selectors import installations_visible_to, published_integration, shown_configuration
from ..services.consent import installation_scopes_approve
from ..services.installations import (
    installation_configure,
    installation_create,
    installation_pause,
    installation_resume,
    installation_select_spaces,
    installation_uninstall,
)

#: The service's field names as the API spells them.
API_FIELD_NAMES = {"space_selection": "spaceSelection", "selected_spaces": "selectedSpaces"}
#: What installing can refuse, by the field it names (installation_create, API names).
installing_errors = service_errors(
    *("integration", "organization", "space", "site", "spaceSelection", "selectedSpaces"),
    *("configuration", "configuration.KEY"),
    methods=["post"],
)


# --- Representations ------------------------------------------------------------------------


class StatusReasonOutput(serializers.Serializer):
    path = serializers.CharField()
    message = serializers.CharField()


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
    publicEndpoint = serializers.SerializerMethodField(
        method_name="get_public_endpoint",
        help_text="The world-facing URL whose requests reach the integration's fetch.",
    )
    createdAt = serializers.DateTimeField(source="created_at")
    updatedAt = serializers.DateTimeField(source="updated_at")

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
        return [space.pk for space in installation.selected_spaces.all()]


def installation_rows(queryset):
    return queryset.select_related("integration", "parent").prefetch_related("selected_spaces")


def installation_for(request, installation_id: str) -> Installation:
    return get_object_or_404(
        installation_rows(installations_visible_to(request.user)), pk=installation_id
    )


def fresh(installation: Installation) -> Installation:
    """The installation as stored now, ready to be shown."""
    return installation_rows(Installation.objects).get(pk=installation.pk)


def installation_response(installation: Installation, status_code=status.HTTP_200_OK):
    return Response(InstallationOutput(fresh(installation)).data, status=status_code)


# --- Inputs ---------------------------------------------------------------------------------


class ConfigurationField(serializers.DictField):
    """Property values by name, as the manifest's configuration defines them."""

    def __init__(self, **kwargs):
        super().__init__(allow_empty=False, **kwargs)


class InstallationInput(serializers.Serializer):
    integration = serializers.CharField(max_length=64, help_text="The integration's name.")
    configuration = ConfigurationField(required=False)
    installToken = serializers.CharField(
        required=False, max_length=64, help_text="An unlisted integration's install link token."
    )


class OrganizationInstallationInput(InstallationInput):
    spaceSelection = serializers.ChoiceField(
        choices=Installation.SpaceSelection.choices, required=False
    )
    selectedSpaces = serializers.ListField(
        child=serializers.CharField(max_length=32), required=False, max_length=1000
    )


class SpaceSelectionInput(serializers.Serializer):
    spaceSelection = serializers.ChoiceField(choices=Installation.SpaceSelection.choices)
    selectedSpaces = serializers.ListField(
        child=serializers.CharField(max_length=32), required=False, default=list, max_length=1000
    )


def organization_spaces(organization, space_ids: list[str]) -> list[Space]:
    """The organization's spaces with these ids; a field error names any other id."""
    spaces = list(Space.objects.filter(organization=organization, pk__in=set(space_ids)))
    unknown = sorted(set(space_ids) - {space.pk for space in spaces})
    if unknown:
        raise ValidationError(
            {"selectedSpaces": [f"no space of this organization has the id {', '.join(unknown)}"]}
        )
    return spaces


def create_from(request, data, *, organization, **where) -> Response:
    """Install the integration the validated ``data`` names; 404 when the caller may not."""
    integration = published_integration(data["integration"])
    if integration is None:
        raise Http404
    with renamed_error_fields(**API_FIELD_NAMES):
        installation = installation_create(
            user=request.user,
            integration=integration,
            organization=organization,
            configuration=data.get("configuration"),
            install_token=data.get("installToken"),
            **where,
        )
    return installation_response(installation, status.HTTP_201_CREATED)


# --- Installing -----------------------------------------------------------------------------


class LevelFilter(QueryParameters):
    level = serializers.ChoiceField(choices=Installation.Level.values, required=False)


@installing_errors
class OrganizationInstallationsApi(generics.ListAPIView):
    """Every installation of one of the caller's organizations (GET, optionally of one
    level); install an integration in the organization (POST)."""

    queryset = Installation.objects.none()
    serializer_class = InstallationOutput

    @extend_schema(parameters=[LevelFilter])
    def get(self, request, *args, **kwargs):
        return super().get(request, *args, **kwargs)

    def get_queryset(self):
        organization = organization_for(self.request, self.kwargs["org"])
        query = LevelFilter(data=self.request.query_params)
        query.is_valid(raise_exception=True)
        installations = installations_visible_to(self.request.user).filter(
            organization=organization, **query.validated_data
        )
        return installation_rows(installations)

    @extend_schema(request=OrganizationInstallationInput, responses={201: InstallationOutput})
    def post(self, request, org):
        organization = organization_for(request, org)
        data = OrganizationInstallationInput(data=request.data)
        data.is_valid(raise_exception=True)
        fields = data.validated_data
        return create_from(
            request,
            fields,
            organization=organization,
            space_selection=fields.get("spaceSelection"),
            selected_spaces=organization_spaces(organization, fields.get("selectedSpaces", [])),
        )


@installing_errors
class SpaceInstallationsApi(generics.ListAPIView):
    """The installations in a space (GET); install an integration into it (POST)."""

    queryset = Installation.objects.none()
    serializer_class = InstallationOutput

    def space(self) -> Space:
        spaces = spaces_visible_to(self.request.user).select_related("organization")
        return get_object_or_404(spaces, pk=self.kwargs["space_id"])

    def get_queryset(self):
        return installation_rows(
            installations_visible_to(self.request.user).filter(space=self.space())
        )

    @extend_schema(request=InstallationInput, responses={201: InstallationOutput})
    def post(self, request, space_id):
        space = self.space()
        data = InstallationInput(data=request.data)
        data.is_valid(raise_exception=True)
        return create_from(
            request, data.validated_data, organization=space.organization, space=space
        )


@installing_errors
class SiteInstallationsApi(generics.ListAPIView):
    """The installations in a site (GET); install an integration into it (POST)."""

    queryset = Installation.objects.none()
    serializer_class = InstallationOutput

    def site(self):
        sites = sites_visible_to(self.request.user).select_related("organization")
        return get_object_or_404(sites, pk=self.kwargs["site_id"])

    def get_queryset(self):
        return installation_rows(
            installations_visible_to(self.request.user).filter(site=self.site())
        )

    @extend_schema(request=InstallationInput, responses={201: InstallationOutput})
    def post(self, request, site_id):
        site = self.site()
        data = InstallationInput(data=request.data)
        data.is_valid(raise_exception=True)
        return create_from(request, data.validated_data, organization=site.organization, site=site)


# --- One installation -----------------------------------------------------------------------


class InstallationDetailApi(APIView):
    """An installation (GET); uninstall it (DELETE: an organization installation takes the
    space and site installations under it along)."""

    @extend_schema(responses=InstallationOutput)
    def get(self, request, installation_id):
        return Response(InstallationOutput(installation_for(request, installation_id)).data)

    @extend_schema(responses={204: None})
    def delete(self, request, installation_id):
        installation_uninstall(installation=installation_for(request, installation_id))
        return Response(status=status.HTTP_204_NO_CONTENT)


@service_errors("configuration.KEY")
@service_errors("configuration", codes=("invalid", "empty", "not_a_dict", "null"))
class InstallationConfigurationApi(APIView):
    """Edit one or more configuration properties (``null`` unsets one); runs the setup flow:
    ``active`` when the configuration validates, else ``pending`` with the reasons."""

    @extend_schema(request=OpenApiTypes.OBJECT, responses=InstallationOutput)
    def patch(self, request, installation_id):
        installation = installation_for(request, installation_id)
        try:
            changes = ConfigurationField().run_validation(request.data)
        except serializers.ValidationError as error:
            raise serializers.ValidationError({"configuration": error.detail}) from error
        installation = installation_configure(installation=installation, changes=changes)
        return installation_response(installation)


@service_errors("spaceSelection", "selectedSpaces")
class InstallationSpaceSelectionApi(APIView):
    """Which spaces an organization installation covers: all, or the selected ones."""

    @extend_schema(request=SpaceSelectionInput, responses=InstallationOutput)
    def put(self, request, installation_id):
        installation = installation_for(request, installation_id)
        data = SpaceSelectionInput(data=request.data)
        data.is_valid(raise_exception=True)
        spaces = organization_spaces(
            installation.organization_id, data.validated_data["selectedSpaces"]
        )
        with renamed_error_fields(**API_FIELD_NAMES):
            installation = installation_select_spaces(
                installation=installation,
                space_selection=data.validated_data["spaceSelection"],
                spaces=spaces,
            )
        return installation_response(installation)


class InstallationPauseApi(APIView):
    """Pause: no events and no deliveries reach the installation until it is resumed."""

    @extend_schema(request=None, responses=InstallationOutput)
    def post(self, request, installation_id):
        installation = installation_pause(installation=installation_for(request, installation_id))
        return installation_response(installation)


class InstallationResumeApi(APIView):
    """Resume: the configuration is validated again, into ``active`` or ``pending``."""

    @extend_schema(request=None, responses=InstallationOutput)
    def post(self, request, installation_id):
        installation = installation_resume(installation=installation_for(request, installation_id))
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
class InstallationScopesApproveApi(APIView):
    """An admin of the organization grants the new scopes the integration asks for (all, or
    ``scopes``): they apply to this installation, its organization installation and the
    installations under it at once, and each gets ``installation_setup``. Members: 403."""

    @extend_schema(request=ScopesApprovalInput, responses=InstallationOutput)
    def post(self, request, installation_id):
        installation = installation_for(request, installation_id)
        data = ScopesApprovalInput(data=request.data)
        data.is_valid(raise_exception=True)
        installation = installation_scopes_approve(
            user=request.user, installation=installation, scopes=data.validated_data.get("scopes")
        )
        return installation_response(installation)
