"""REST API of the host platform (``/api/v1/``): the caller and their organizations.

A signed-in person creates an organization and is its admin (``ORGANIZATION_CREATION`` may
keep that to staff); its people (any role) read it, its admins change it; anyone else gets
404. Roles are the access module's table, asked through ``ActsByRole``. How every resource
looks things up for the caller is in ``lookup``.
"""

from drf_spectacular.utils import OpenApiExample, extend_schema, extend_schema_view
from rest_framework import exceptions, generics, serializers, status
from rest_framework.response import Response
from rest_framework.views import APIView

from .. import access
from ..access import Action, memberships_of, organizations_of
from ..models import SUBDOMAIN_VALIDATOR, Membership, Organization
from ..organizations import services
from .lookup import organization_for
from .permissions import ActsByRole
from .schema import service_errors

# --- Representations ------------------------------------------------------------------------


class OrganizationOutput(serializers.Serializer):
    id = serializers.CharField()
    subdomain = serializers.CharField()
    title = serializers.CharField()
    role = serializers.ChoiceField(choices=Membership.Role.choices, help_text="The caller's role.")
    membersMayInstall = serializers.BooleanField(
        source="members_may_install",
        help_text="Members (not only admins) may install integrations whose scopes write nothing.",
    )
    createdAt = serializers.DateTimeField(source="created_at")


class OrganizationCreateInput(serializers.Serializer):
    title = serializers.CharField(max_length=200)
    subdomain = serializers.CharField(
        max_length=63,
        help_text=f"{SUBDOMAIN_VALIDATOR.message} Unique; a few names are reserved (new, api, "
        "admin, www, static, marketplace).",
    )


class OrganizationUpdateInput(serializers.Serializer):
    title = serializers.CharField(max_length=200, required=False)
    membersMayInstall = serializers.BooleanField(
        required=False,
        help_text="Let members install integrations whose scopes write nothing (admins "
        "install every integration).",
    )


class MembershipOutput(serializers.ModelSerializer):
    id = serializers.CharField(source="organization.id")
    subdomain = serializers.CharField(source="organization.subdomain")
    title = serializers.CharField(source="organization.title")

    class Meta:
        model = Membership
        fields = ["id", "subdomain", "title", "role"]


class MeOutput(serializers.Serializer):
    username = serializers.CharField()
    organizations = MembershipOutput(many=True)


# --- The caller and organizations -----------------------------------------------------------


class MeApi(APIView):
    """The caller and the organizations they belong to."""

    @extend_schema(summary="The caller and their organizations", responses=MeOutput)
    def get(self, request):
        memberships = memberships_of(request.user)
        data = {"username": request.user.get_username(), "organizations": memberships}
        return Response(MeOutput(data).data)


@service_errors("title", "subdomain", methods=["post"])
@extend_schema_view(get=extend_schema(summary="List the caller's organizations"))
class OrganizationListApi(generics.ListAPIView):
    """The caller's organizations (GET); create one (POST), of which the caller is the admin:
    any signed-in person, or only staff when the operator set ``ORGANIZATION_CREATION=staff``
    (else 403)."""

    queryset = Organization.objects.none()
    serializer_class = OrganizationOutput

    def get_queryset(self):
        return organizations_of(self.request.user)

    @extend_schema(
        summary="Create an organization (the caller is its admin)",
        request=OrganizationCreateInput,
        responses={201: OrganizationOutput},
        examples=[
            OpenApiExample("Acme", value={"title": "Acme", "subdomain": "acme"}, request_only=True)
        ],
    )
    def post(self, request):
        if not access.may_create_organization(request.user):
            raise exceptions.PermissionDenied(access.ORGANIZATION_CREATION_REFUSAL)
        data = OrganizationCreateInput(data=request.data)
        data.is_valid(raise_exception=True)
        organization = services.organization_create(**data.validated_data, admin=request.user)
        created = organization_for(request, organization.pk)
        return Response(OrganizationOutput(created).data, status=status.HTTP_201_CREATED)


@service_errors("title", methods=["patch"])
class OrganizationDetailApi(APIView):
    """One of the caller's organizations, by id or subdomain (its people read it); PATCH
    renames it or sets ``membersMayInstall`` (its admins)."""

    permission_classes = [ActsByRole]
    access_actions = {"GET": Action.READ, "PATCH": Action.MANAGE_ORGANIZATION}

    def organization(self, request, org) -> Organization:
        organization = organization_for(request, org)
        self.check_object_permissions(request, organization)
        return organization

    @extend_schema(summary="Get one of the caller's organizations", responses=OrganizationOutput)
    def get(self, request, org):
        return Response(OrganizationOutput(self.organization(request, org)).data)

    @extend_schema(
        summary="Change an organization's title or members' installing",
        request=OrganizationUpdateInput,
        responses=OrganizationOutput,
        examples=[
            OpenApiExample("Rename", value={"title": "Acme Corp"}, request_only=True),
            OpenApiExample(
                "Members install read-only integrations",
                value={"membersMayInstall": True},
                request_only=True,
            ),
        ],
    )
    def patch(self, request, org):
        organization = self.organization(request, org)
        data = OrganizationUpdateInput(data=request.data)
        data.is_valid(raise_exception=True)
        fields = data.validated_data
        services.organization_update(
            organization=organization,
            actor=request.user,
            title=fields.get("title"),
            members_may_install=fields.get("membersMayInstall"),
        )
        return Response(OrganizationOutput(organization).data)
