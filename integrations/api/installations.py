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
from drf_spectacular.utils import extend_schema
from rest_framework import generics, serializers, status
from rest_framework.response import Response
from rest_framework.views import APIView

from docplatform.api import organization_for
from docplatform.api_errors import renamed_error_fields
from docplatform.api_inputs import QueryParameters
from docplatform.api_schema import service_errors
from docplatform.models import Space
from docplatform.selectors import sites_visible_to, spaces_visible_to

from ..models import Installation
from ..selectors import installations_visible_to, published_integration
from ..services.consent import installation_scopes_approve
from ..services.installations import (
    installation_configure,
    installation_create,
    installation_pause,
    installation_resume,
    installation_select_spaces,
    installation_uninstall,
)
from .installation_output import (
    InstallationOutput,
    installation_for,
    installation_response,
    installation_rows,
)

#: The service's field names as the API spells them.
API_FIELD_NAMES = {"space_selection": "spaceSelection", "selected_spaces": "selectedSpaces"}
#: What installing can refuse, by the field it names (installation_create, API names).
installing_errors = service_errors(
    *("integration", "organization", "space", "site", "spaceSelection", "selectedSpaces"),
    *("configuration", "configuration.KEY"),
    methods=["post"],
)


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
