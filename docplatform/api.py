"""REST API of the host platform (``/api/v1/``): the caller, organizations, spaces and their
content, sites, events, and the public beacon.

Members of an organization (any role) read and act on its spaces and sites; anyone else gets
404. An installation token reaches the spaces and sites its installation covers, as far as
its integration's scopes allow (``installation_scopes`` on each view).
"""

from django.core.exceptions import ValidationError
from django.core.validators import URLValidator
from django.http import Http404
from django.shortcuts import get_object_or_404
from drf_spectacular.utils import extend_schema
from rest_framework import generics, serializers, status
from rest_framework.permissions import AllowAny
from rest_framework.response import Response
from rest_framework.throttling import AnonRateThrottle
from rest_framework.views import APIView

from . import services
from .api_inputs import EventTypeField, PlainTextJSONParser, QueryParameters, SafeJSONParser
from .api_permissions import IsPersonOrScopedInstallation
from .api_schema import service_errors
from .api_visitors import remember_visitor, visitor_from
from .events import FEEDBACK_RATINGS
from .events.models import Event
from .models import Membership, Organization, Page, Revision, Site, Space
from .principals import is_machine
from .selectors import (
    organization_events,
    organization_of_member,
    organizations_of,
    sites_visible_to,
    spaces_visible_to,
)

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


class SpaceOutput(serializers.Serializer):
    id = serializers.CharField()
    organization = serializers.CharField(source="organization_id")
    title = serializers.CharField()
    visibility = serializers.ChoiceField(choices=Space.Visibility.choices)
    currentRevision = serializers.CharField(source="current_revision_id", allow_null=True)
    createdAt = serializers.DateTimeField(source="created_at")


class RevisionOutput(serializers.Serializer):
    id = serializers.CharField()
    space = serializers.CharField(source="space_id")
    parent = serializers.CharField(source="parent_id", allow_null=True)
    message = serializers.CharField()
    author = serializers.CharField(source="author.username", allow_null=True, default=None)
    createdAt = serializers.DateTimeField(source="created_at")


class PageOutput(serializers.Serializer):
    id = serializers.CharField()
    revision = serializers.CharField(source="revision_id")
    path = serializers.CharField()
    title = serializers.CharField()
    body = serializers.CharField()


class SiteOutput(serializers.Serializer):
    id = serializers.CharField()
    organization = serializers.CharField(source="organization_id")
    title = serializers.CharField()
    spaces = serializers.SerializerMethodField(help_text="Ids of the spaces the site publishes.")
    createdAt = serializers.DateTimeField(source="created_at")

    def get_spaces(self, site) -> list[str]:
        return [space.pk for space in site.spaces.all()]


class EventOutput(serializers.Serializer):
    id = serializers.CharField()
    type = serializers.CharField()
    space = serializers.CharField(source="space_id", allow_null=True)
    site = serializers.CharField(source="site_id", allow_null=True)
    payload = serializers.JSONField(help_text="The event's fields.")
    createdAt = serializers.DateTimeField(source="created_at")


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


# --- Spaces ---------------------------------------------------------------------------------


class SpaceListApi(generics.ListAPIView):
    """The spaces of one of the caller's organizations."""

    queryset = Space.objects.none()
    serializer_class = SpaceOutput

    def get_queryset(self):
        return Space.objects.filter(organization=organization_for(self.request, self.kwargs["org"]))


class SpaceVisibilityInput(serializers.Serializer):
    visibility = serializers.ChoiceField(choices=Space.Visibility.choices)


class SpaceDetailApi(APIView):
    """A space; PATCH changes its visibility (fires ``space_visibility_updated``)."""

    permission_classes = [IsPersonOrScopedInstallation]
    installation_scopes = {"GET": "space:metadata:read", "PATCH": "space:metadata:write"}

    @extend_schema(responses=SpaceOutput)
    def get(self, request, space_id):
        return Response(SpaceOutput(space_for(request, space_id)).data)

    @extend_schema(request=SpaceVisibilityInput, responses=SpaceOutput)
    def patch(self, request, space_id):
        space = space_for(request, space_id)
        data = SpaceVisibilityInput(data=request.data)
        data.is_valid(raise_exception=True)
        space = services.space_visibility_set(space=space, **data.validated_data)
        return Response(SpaceOutput(space).data)


class PageInput(serializers.Serializer):
    path = serializers.CharField(max_length=300)
    title = serializers.CharField(max_length=300)
    body = serializers.CharField(allow_blank=True, default="", trim_whitespace=False)


class RevisionInput(serializers.Serializer):
    message = serializers.CharField(max_length=500, allow_blank=True, default="")
    pages = serializers.ListField(child=PageInput(), allow_empty=False, max_length=1000)


@service_errors("pages", methods=["post"])
class SpaceRevisionsApi(generics.ListAPIView):
    """A space's revisions, newest first; POST writes a new one (fires
    ``space_content_updated``)."""

    queryset = Revision.objects.none()
    serializer_class = RevisionOutput
    permission_classes = [IsPersonOrScopedInstallation]
    installation_scopes = {"GET": "space:content:read", "POST": "space:content:write"}

    def get_queryset(self):
        space = space_for(self.request, self.kwargs["space_id"])
        return space.revisions.select_related("author")

    @extend_schema(request=RevisionInput, responses={201: RevisionOutput})
    def post(self, request, space_id):
        space = space_for(request, space_id)
        data = RevisionInput(data=request.data)
        data.is_valid(raise_exception=True)
        revision = services.space_content_update(
            space=space,
            pages=data.validated_data["pages"],
            message=data.validated_data["message"],
            author=None if is_machine(request.user) else request.user,
        )
        return Response(RevisionOutput(revision).data, status=status.HTTP_201_CREATED)


class SpacePagesApi(generics.ListAPIView):
    """The pages of a space's current revision."""

    queryset = Page.objects.none()
    serializer_class = PageOutput
    permission_classes = [IsPersonOrScopedInstallation]
    installation_scopes = {"GET": "space:content:read"}

    def get_queryset(self):
        space = space_for(self.request, self.kwargs["space_id"])
        return Page.objects.filter(revision_id=space.current_revision_id)


class RevisionPagesApi(generics.ListAPIView):
    """The pages of one revision."""

    queryset = Page.objects.none()
    serializer_class = PageOutput
    permission_classes = [IsPersonOrScopedInstallation]
    installation_scopes = {"GET": "space:content:read"}

    def get_queryset(self):
        revisions = Revision.objects.filter(space__in=spaces_for(self.request))
        revision = get_object_or_404(revisions, pk=self.kwargs["revision_id"])
        return revision.pages.all()


class GitSyncStartApi(APIView):
    """A Git sync of the space began (fires ``space_gitsync_started``)."""

    @extend_schema(request=None, responses={204: None})
    def post(self, request, space_id):
        services.space_gitsync_start(space=space_for(request, space_id))
        return Response(status=status.HTTP_204_NO_CONTENT)


class GitSyncCompleteInput(serializers.Serializer):
    status = serializers.ChoiceField(choices=["success", "failure"])


class GitSyncCompleteApi(APIView):
    """A Git sync of the space finished (fires ``space_gitsync_completed``)."""

    @extend_schema(request=GitSyncCompleteInput, responses={204: None})
    def post(self, request, space_id):
        space = space_for(request, space_id)
        data = GitSyncCompleteInput(data=request.data)
        data.is_valid(raise_exception=True)
        services.space_gitsync_complete(space=space, **data.validated_data)
        return Response(status=status.HTTP_204_NO_CONTENT)


class SpaceViewApi(APIView):
    """Record that the caller viewed the space (fires ``space_view``); the visitor is taken
    from the request."""

    @extend_schema(request=None, responses={204: None})
    def post(self, request, space_id):
        space = space_for(request, space_id)
        visitor = visitor_from(request)
        services.space_view_record(space=space, visitor=visitor)
        response = Response(status=status.HTTP_204_NO_CONTENT)
        remember_visitor(response, request, visitor)
        return response


# --- Sites and events -----------------------------------------------------------------------


class SiteListApi(generics.ListAPIView):
    """The sites of one of the caller's organizations."""

    queryset = Site.objects.none()
    serializer_class = SiteOutput

    def get_queryset(self):
        organization = organization_for(self.request, self.kwargs["org"])
        return Site.objects.filter(organization=organization).prefetch_related("spaces")


class SiteDetailApi(APIView):
    permission_classes = [IsPersonOrScopedInstallation]
    installation_scopes = {"GET": "site:metadata:read"}

    @extend_schema(responses=SiteOutput)
    def get(self, request, site_id):
        site = get_object_or_404(sites_for(request).prefetch_related("spaces"), pk=site_id)
        return Response(SiteOutput(site).data)


class EventFilter(QueryParameters):
    type = EventTypeField(required=False, help_text="Only events of this type.")


class EventListApi(generics.ListAPIView):
    """The events fired in one of the caller's organizations, newest first."""

    queryset = Event.objects.none()
    serializer_class = EventOutput

    @extend_schema(parameters=[EventFilter])
    def get(self, request, *args, **kwargs):
        return super().get(request, *args, **kwargs)

    def get_queryset(self):
        organization = organization_for(self.request, self.kwargs["org"])
        query = EventFilter(data=self.request.query_params)
        query.is_valid(raise_exception=True)
        return organization_events(organization, event_type=query.validated_data.get("type"))


# --- The public beacon ----------------------------------------------------------------------


class HttpUrlField(serializers.URLField):
    """An http or https URL."""

    def __init__(self, **kwargs):
        super().__init__(max_length=2000, **kwargs)
        self.validators = [
            validator for validator in self.validators if not isinstance(validator, URLValidator)
        ]
        self.validators.append(
            URLValidator(schemes=["http", "https"], message=self.error_messages["invalid"])
        )


class SiteViewInput(serializers.Serializer):
    url = HttpUrlField()
    referrer = HttpUrlField(required=False, allow_blank=True, default="")


class PageFeedbackInput(serializers.Serializer):
    pageId = serializers.CharField(max_length=32)
    rating = serializers.ChoiceField(choices=FEEDBACK_RATINGS)
    comment = serializers.CharField(
        max_length=5000, allow_blank=True, default="", trim_whitespace=False
    )
    url = HttpUrlField()
    referrer = HttpUrlField(required=False, allow_blank=True, default="")


class BeaconApi(APIView):
    """Public, for the published site's pages: no authentication, no CSRF, throttled per
    client address. The visitor comes from the request itself."""

    authentication_classes = []
    permission_classes = [AllowAny]
    throttle_classes = [AnonRateThrottle]
    parser_classes = [SafeJSONParser, PlainTextJSONParser]

    def recorded(self, request, record) -> Response:
        visitor = visitor_from(request)
        record(visitor)
        response = Response(status=status.HTTP_204_NO_CONTENT)
        remember_visitor(response, request, visitor)
        return response


class BeaconSiteViewApi(BeaconApi):
    """A visitor viewed a page of the site (fires ``site_view``)."""

    @extend_schema(request=SiteViewInput, responses={204: None})
    def post(self, request, site_id):
        site = get_object_or_404(Site, pk=site_id)
        data = SiteViewInput(data=request.data)
        data.is_valid(raise_exception=True)
        return self.recorded(
            request,
            lambda visitor: services.site_view_record(
                site=site, visitor=visitor, **data.validated_data
            ),
        )


@service_errors("pageId")
class BeaconPageFeedbackApi(BeaconApi):
    """A visitor rated a page of the site (fires ``page_feedback``)."""

    @extend_schema(request=PageFeedbackInput, responses={204: None})
    def post(self, request, site_id):
        site = get_object_or_404(Site, pk=site_id)
        data = PageFeedbackInput(data=request.data)
        data.is_valid(raise_exception=True)
        fields = dict(data.validated_data)
        page = (
            Page.objects.select_related("revision__space").filter(pk=fields.pop("pageId")).first()
        )
        if page is None:
            raise ValidationError({"pageId": ["the page is not on this site"]})
        return self.recorded(
            request,
            lambda visitor: services.page_feedback_record(
                site=site, page=page, visitor=visitor, **fields
            ),
        )
