"""REST API of the host platform: sites, the events fired in an organization, and the public
beacon that published sites' pages call.

Members of an organization (any role) read its sites and events; anyone else gets 404. An
installation token reaches the sites its installation covers, as far as its integration's
scopes allow (``installation_scopes`` on each view). The beacon takes no authentication.
"""

from django.core.exceptions import ValidationError
from django.core.validators import URLValidator
from django.shortcuts import get_object_or_404
from drf_spectacular.utils import OpenApiExample, extend_schema, extend_schema_view
from rest_framework import generics, serializers, status
from rest_framework.exceptions import Throttled
from rest_framework.permissions import AllowAny
from rest_framework.response import Response
from rest_framework.throttling import AnonRateThrottle
from rest_framework.views import APIView

from ..client_address import client_ip
from ..events import FEEDBACK_RATINGS
from ..events.models import Event
from ..models import Site
from ..selectors import organization_events, organization_sites
from ..sites import selectors as site_selectors
from ..sites import services as site_services
from ..sites.services import MAX_COMMENT_LENGTH
from ..sites.throttle import wait_seconds
from ..sites.visitors import site_visitor
from .inputs import EventTypeField, PlainTextJSONParser, QueryParameters, SafeJSONParser
from .lookup import organization_for, sites_for
from .permissions import IsPersonOrScopedInstallation
from .schema import service_errors
from .visitors import remember_visitor

# --- Representations ------------------------------------------------------------------------


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


# --- Sites and events -----------------------------------------------------------------------


@extend_schema_view(get=extend_schema(summary="List an organization's sites"))
class SiteListApi(generics.ListAPIView):
    """The sites of one of the caller's organizations."""

    queryset = Site.objects.none()
    serializer_class = SiteOutput

    def get_queryset(self):
        organization = organization_for(self.request, self.kwargs["org"])
        return organization_sites(organization)


class SiteDetailApi(APIView):
    """A site, with the spaces it publishes."""

    permission_classes = [IsPersonOrScopedInstallation]
    installation_scopes = {"GET": "site:metadata:read"}

    @extend_schema(summary="Get a site", responses=SiteOutput)
    def get(self, request, site_id):
        site = get_object_or_404(sites_for(request).prefetch_related("spaces"), pk=site_id)
        return Response(SiteOutput(site).data)


class EventFilter(QueryParameters):
    type = EventTypeField(required=False, help_text="Only events of this type.")


class EventListApi(generics.ListAPIView):
    """The events fired in one of the caller's organizations, newest first."""

    queryset = Event.objects.none()
    serializer_class = EventOutput

    @extend_schema(summary="List the events fired in an organization", parameters=[EventFilter])
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
        max_length=MAX_COMMENT_LENGTH, allow_blank=True, default="", trim_whitespace=False
    )
    url = HttpUrlField()
    referrer = HttpUrlField(required=False, allow_blank=True, default="")


class BeaconApi(APIView):
    """Public, for the published site's pages, wherever they are served: no authentication,
    no CSRF, throttled per client address. The visitor comes from the request itself; the
    page's ``url`` must be one of the site's addresses (``sites.addresses``). The same
    services as the site's own pages record it (``sites.services``)."""

    authentication_classes = []
    permission_classes = [AllowAny]
    throttle_classes = [AnonRateThrottle]
    parser_classes = [SafeJSONParser, PlainTextJSONParser]

    def recorded(self, request, record) -> Response:
        visitor, who = site_visitor(request)
        record(visitor, who)
        response = Response(status=status.HTTP_204_NO_CONTENT)
        remember_visitor(response, request, visitor)
        return response


@service_errors("url")
class BeaconSiteViewApi(BeaconApi):
    """A visitor viewed a page of the site (fires ``site_view``, at most once per visitor and
    page a minute)."""

    @extend_schema(
        summary="Record a visitor's view of a published site's page",
        request=SiteViewInput,
        responses={204: None},
        examples=[
            OpenApiExample(
                "A page opened from a search",
                value={
                    "url": "https://docs.acme.example/guide/install",
                    "referrer": "https://search.example/?q=acme+install",
                },
                request_only=True,
            )
        ],
    )
    def post(self, request, site_id):
        site = get_object_or_404(Site, pk=site_id)
        data = SiteViewInput(data=request.data)
        data.is_valid(raise_exception=True)
        return self.recorded(
            request,
            lambda visitor, who: site_services.site_view_record_once(
                site=site, visitor=visitor, who=who, **data.validated_data
            ),
        )


@service_errors("pageId", "url", "comment")
class BeaconPageFeedbackApi(BeaconApi):
    """A visitor rated a page of the site (fires ``page_feedback``; one rating per visitor
    and page, a second replaces the first); at most ``SITE_FEEDBACK_RATE`` per address."""

    @extend_schema(
        summary="Record a visitor's rating of a published site's page",
        request=PageFeedbackInput,
        responses={204: None},
        examples=[
            OpenApiExample(
                "A rating with a comment",
                value={
                    "pageId": "Pg7qK2mXw9RtYb4LcN1s",
                    "rating": "good",
                    "comment": "The install steps worked first time.",
                    "url": "https://docs.acme.example/guide/install",
                },
                request_only=True,
            )
        ],
    )
    def post(self, request, site_id):
        site = get_object_or_404(Site, pk=site_id)
        wait = wait_seconds("feedback", client_ip(request))
        if wait:
            raise Throttled(wait)
        data = PageFeedbackInput(data=request.data)
        data.is_valid(raise_exception=True)
        fields = dict(data.validated_data)
        page = site_selectors.page_on_site(site, fields.pop("pageId"))
        if page is None:
            raise ValidationError({"pageId": ["the page is not on this site"]})
        return self.recorded(
            request,
            lambda visitor, who: site_services.page_feedback_give(
                site=site, page=page, visitor=visitor, who=who, **fields
            ),
        )
