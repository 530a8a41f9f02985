"""REST API of the host platform (``/api/v1/``): the caller and organizations, and how every
resource looks things up for the caller. Spaces and their content are in ``api_spaces``;
sites, events and the public beacon in ``api_sites``; personal API tokens in ``api_tokens``.

Members of an organization (any role) read and act on its spaces and sites; anyone else gets
404. An installation token reaches the spaces and sites its installation covers, as far as
its integration's scopes allow (``installation_scopes`` on each view).
"""

from django.http import Http404
from django.shortcuts import get_object_or_404
from drf_spectacular.utils import extend_schema
from rest_framework import generics, serializers
from rest_framework.response import Response
from rest_framework.views import APIView

from .models import Membership, Organization, Space
from .principals import is_machine
from .selectors import organization_of_member, organizations_of, sites_visible_to, spaces_visible_to

# --- Looking things up for the caller -------------------------------------------------------


def organization_for(request, ref: str) -> Organization:
    """One of the caller's organizations, by id or subdomain; 404 for any other."""
    organization = organization_of_member(user=request.user, ref=ref)
    if organization is None:
        raise Http404
    return organization


def spaces_for(request):
    """The spaces the caller reaches: a member's organizations' or a machine principal's (an
    installation's)."""
    if is_machine(request.user):
        return request.user.spaces()
    return spaces_visible_to(request.user)


def sites_for(request):
    if is_machine(request.user):
        return request.user.sites()
    return sites_visible_to(request.user)


def space_for(request, space_id: str) -> Space:
    return get_object_or_404(spaces_for(request).select_related("organization"), pk=space_id)


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

    @extend_schema(responses=MeOutput)
    def get(self, request):
        memberships = Membership.objects.filter(user=request.user).select_related("organization")
        data = {"username": request.user.get_username(), "organizations": memberships}
        return Response(MeOutput(data).data)


class OrganizationListApi(generics.ListAPIView):
    """The caller's organizations."""

    queryset = Organization.objects.none()
    serializer_class = OrganizationOutput

    def get_queryset(self):
        return organizations_of(self.request.user)


class OrganizationDetailApi(APIView):
    """One of the caller's organizations, by id or subdomain."""

    @extend_schema(responses=OrganizationOutput)
    def get(self, request, org):
        return Response(OrganizationOutput(organization_for(request, org)).data)
