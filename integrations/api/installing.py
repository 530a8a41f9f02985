"""Installing: the installations of an organization, a space or a site (GET), and installing
an integration into one of them (POST).

Installing acts for the caller's own organization only, under the visibility rules of
``installation_create``; an integration the caller may not see is a 404. One installation
and its setup flow is in ``installations``.
"""

from django.http import Http404
from django.shortcuts import get_object_or_404
from drf_spectacular.utils import OpenApiExample, extend_schema, extend_schema_view
from rest_framework import generics, serializers, status
from rest_framework.response import Response

from docplatform.access import sites_visible_to, spaces_visible_to
from docplatform.api.errors import renamed_error_fields
from docplatform.api.inputs import QueryParameters
from docplatform.api.lookup import organization_for
from docplatform.api.schema import service_errors
from docplatform.models import Space

from ..models import Installation
from ..selectors import installations_visible_to, published_integration
from ..services.installations import installation_create
from .installation_output import (
    EXAMPLE_IDS,
    InstallationOutput,
    installation_example,
    installation_response,
    installation_rows,
)
from .installations import API_FIELD_NAMES, ConfigurationField, organization_spaces

#: What installing can refuse, by the field it names (installation_create, API names).
installing_errors = service_errors(
    *("integration", "organization", "space", "site", "spaceSelection", "selectedSpaces"),
    *("configuration", "configuration.KEY"),
    methods=["post"],
)


# --- Inputs ---------------------------------------------------------------------------------


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

#: What installing into a space or a site takes, for the documentation.
INSTALLING_EXAMPLES = [
    OpenApiExample(
        "With its configuration",
        value={"integration": "event-reactor", "configuration": {"min_words": 80}},
        request_only=True,
    ),
    OpenApiExample(
        "An unlisted integration, by its install link",
        value={"integration": "event-reactor", "installToken": "k3J9xQv2LmT8rZp1Wc7Ny4Bd"},
        request_only=True,
    ),
]
INSTALLING_DESCRIPTION = (
    "Installs the integration for the caller's organization, with the caller's consent to "
    "the scopes it asks for: 201 with the installation, `active` when its configuration "
    "validates, else `pending` with the reasons (`statusReasons`). An integration the caller "
    "may not see is a 404; one that does not install at this level, or a configuration that "
    "does not fit the manifest, a 400 naming the field."
)


class LevelFilter(QueryParameters):
    level = serializers.ChoiceField(choices=Installation.Level.values, required=False)


@installing_errors
class OrganizationInstallationsApi(generics.ListAPIView):
    """Every installation of one of the caller's organizations (GET, optionally of one
    level); install an integration in the organization (POST)."""

    queryset = Installation.objects.none()
    serializer_class = InstallationOutput

    @extend_schema(
        summary="List an organization's installations",
        description="Every installation of the organization: its organization installations "
        "and the space and site installations under them; `level` keeps one level.",
        parameters=[LevelFilter],
    )
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

    @extend_schema(
        summary="Install an integration in an organization",
        description=INSTALLING_DESCRIPTION
        + " An organization installation covers every space (`spaceSelection`: `all`, the "
        "default) or the `selectedSpaces`; an organization has one installation of an "
        "integration (installing it again is a 400 naming `integration`).",
        request=OrganizationInstallationInput,
        responses={201: InstallationOutput},
        examples=[
            OpenApiExample(
                "Every space",
                value={"integration": "event-reactor", "configuration": {"min_words": 80}},
                request_only=True,
            ),
            OpenApiExample(
                "Selected spaces",
                value={
                    "integration": "event-reactor",
                    "spaceSelection": "selected",
                    "selectedSpaces": [EXAMPLE_IDS["space"], EXAMPLE_IDS["other_space"]],
                },
                request_only=True,
            ),
            installation_example(
                "An organization installation",
                id=EXAMPLE_IDS["organization_installation"],
                level="organization",
                space=None,
                parent=None,
                configuration={"min_words": 80},
                spaceSelection="all",
                selectedSpaces=[],
                publicEndpoint="https://integrations.example.com/installations/"
                + EXAMPLE_IDS["organization_installation"],
            ),
        ],
    )
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
@extend_schema_view(
    get=extend_schema(
        summary="List a space's installations",
        description="The installations in the space, of any integration.",
    )
)
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

    @extend_schema(
        summary="Install an integration in a space",
        description=INSTALLING_DESCRIPTION
        + " It goes under the organization's installation of the integration (made at once "
        "when there is none) and shares its granted scopes.",
        request=InstallationInput,
        responses={201: InstallationOutput},
        examples=[*INSTALLING_EXAMPLES, installation_example("A space installation")],
    )
    def post(self, request, space_id):
        space = self.space()
        data = InstallationInput(data=request.data)
        data.is_valid(raise_exception=True)
        return create_from(
            request, data.validated_data, organization=space.organization, space=space
        )


@installing_errors
@extend_schema_view(
    get=extend_schema(
        summary="List a site's installations",
        description="The installations in the site, of any integration.",
    )
)
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

    @extend_schema(
        summary="Install an integration in a site",
        description=INSTALLING_DESCRIPTION
        + " It goes under the organization's installation of the integration (made at once "
        "when there is none) and shares its granted scopes.",
        request=InstallationInput,
        responses={201: InstallationOutput},
        examples=[
            *INSTALLING_EXAMPLES,
            installation_example(
                "A site installation", level="site", space=None, site=EXAMPLE_IDS["site"]
            ),
        ],
    )
    def post(self, request, site_id):
        site = self.site()
        data = InstallationInput(data=request.data)
        data.is_valid(raise_exception=True)
        return create_from(request, data.validated_data, organization=site.organization, site=site)
