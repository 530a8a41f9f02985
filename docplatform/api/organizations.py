"""REST API of the host platform (``/api/v1/``): the caller and their organizations.

Members of an organization (any role) read it; anyone else gets 404. How every resource looks
things up for the caller is in ``lookup``.
"""

from drf_spectacular.utils import extend_schema, extend_schema_view
from rest_framework import generics, serializers
from rest_framework.response import Response
from rest_framework.views import APIView

from ..access import memberships_of, organizations_of
from ..models import Membership, Organization
from .lookup import organization_for

# --- Representations ------------------------------------------------------------------------


class OrganizationOutput(serializers.Serializer):
    id = serializers.CharField()
    subdomain = serializers.CharField()
    title = serializers.CharField()
    role = serializers.ChoiceField(choices=Membership.Role.choices, help_text="The caller's role.")
    createdAt = serializers.DateTimeField(source="created_at")


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


@extend_schema_view(get=extend_schema(summary="List the caller's organizations"))
class OrganizationListApi(generics.ListAPIView):
    """The caller's organizations."""

    queryset = Organization.objects.none()
    serializer_class = OrganizationOutput

    def get_queryset(self):
        return organizations_of(self.request.user)


class OrganizationDetailApi(APIView):
    """One of the caller's organizations, by id or subdomain."""

    @extend_schema(summary="Get one of the caller's organizations", responses=OrganizationOutput)
    def get(self, request, org):
        return Response(OrganizationOutput(organization_for(request, org)).data)
