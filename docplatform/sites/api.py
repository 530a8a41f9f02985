"""REST API of the host platform: sites, the events fired in an organization, and the public
beacon that published sites' pages call.

An organization's people (any role) read its sites and events; its admins create, change,
publish and delete sites (``ActsByRole``: the access module's table); anyone else gets 404.
An installation token reaches the sites its installation covers, as far as its integration's
scopes allow (``installation_scopes`` on each view). The beacon takes no authentication, and
knows published sites only.
"""

from django.core.exceptions import PermissionDenied, ValidationError
from django.core.validators import URLValidator
from django.shortcuts import get_object_or_404
from drf_spectacular.utils import OpenApiExample, extend_schema, extend_schema_view
from rest_framework import generics, serializers, status
from rest_framework.exceptions import Throttled
from rest_framework.permissions import AllowAny
from rest_framework.response import Response
from rest_framework.views import APIView

from ..access import Action
from ..api.inputs import EventTypeField, PlainTextJSONParser, QueryParameters, SafeJSONParser
from ..api.lookup import organization_for, sites_for
from ..api.pagination import NewestFirstCursorPagination
from ..api.permissions import ActsByRole
from ..api.schema import service_errors
from ..api.throttles import AnonRateThrottle
from ..client_address import client_ip
from ..events import FEEDBACK_RATINGS, payload_without_claims
from ..events.models import Event
from ..models import Site
from ..selectors import organization_events, organization_sites
from ..visitor_rates import wait_seconds
from ..visitors import remember_visitor
from . import selectors as site_selectors
from . import services as site_services
from . import site_services as site_admin
from .services import MAX_COMMENT_LENGTH
from .visitors import site_visitor

# --- Representations ------------------------------------------------------------------------


class SiteOutput(serializers.Serializer):
    id = serializers.CharField()
    organization = serializers.CharField(source="organization_id")
    title = serializers.CharField()
    spaces = serializers.SerializerMethodField(
        help_text="Ids of the spaces the site publishes, in the site's order."
    )
    published = serializers.BooleanField(
        help_text="Served on SITES_URL; an unpublished site answers 404 there."
    )
    audience = serializers.ChoiceField(
        choices=["public", "authenticated"],
        help_text="public: anyone reads it; authenticated: only visitors signed in through "
        "authInstallation.",
    )
    authInstallation = serializers.SerializerMethodField(
        help_text="The site installation (scope site:visitor:auth) that signs its visitors in; "
        "null for a public site."
    )
    createdAt = serializers.DateTimeField(source="created_at")

    def get_spaces(self, site) -> list[str]:
        return [placement.space_id for placement in site.placements.all()]

    def get_authInstallation(self, site) -> str | None:
        return site.visitor_auth_installation if site.authenticated else None


SPACES_HELP = (
    "Ids of spaces of the site's organization, in the order the site shows them (private "
    "ones are not shown to its visitors)."
)


class SiteCreateInput(serializers.Serializer):
    title = serializers.CharField(max_length=200)
    spaces = serializers.ListField(
        child=serializers.CharField(max_length=32),
        max_length=200,
        default=list,
        help_text=SPACES_HELP,
    )
    published = serializers.BooleanField(default=False, help_text="Serve it on SITES_URL.")


class SiteUpdateInput(serializers.Serializer):
    title = serializers.CharField(max_length=200, required=False)
    spaces = serializers.ListField(
        child=serializers.CharField(max_length=32),
        max_length=200,
        required=False,
        help_text=SPACES_HELP + " The list replaces the site's.",
    )
    published = serializers.BooleanField(
        required=False, help_text="Serve it on SITES_URL (true) or stop (false)."
    )
    audience = serializers.CharField(
        required=False,
        max_length=32,
        help_text="public, or authenticated (with authInstallation, or the site's current one): "
        "only visitors signed in through that installation read the site.",
    )
    authInstallation = serializers.CharField(
        required=False,
        allow_blank=True,
        max_length=32,
        help_text="The id of one of the site's installations whose integration is granted "
        "site:visitor:auth.",
    )

    def validate(self, data):
        if not data:
            raise serializers.ValidationError(
                "give title, spaces, published, audience or authInstallation"
            )
        return data


class EventOutput(serializers.Serializer):
    id = serializers.CharField()
    type = serializers.CharField()
    space = serializers.CharField(source="space_id", allow_null=True)
    site = serializers.CharField(source="site_id", allow_null=True)
    payload = serializers.SerializerMethodField(
        help_text="The event's fields (never a visitor's claims: only installations granted "
        "site:visitor:claims receive them)."
    )
    test = serializers.BooleanField(
        help_text="A sample event (`trigger`, Send test event) with made-up data, fired to one "
        "installation alone: never replayed nor sent to another installation."
    )
    createdAt = serializers.DateTimeField(source="created_at")

    def get_payload(self, event) -> dict:
        return payload_without_claims(event.payload)


# --- Sites and events -----------------------------------------------------------------------


@service_errors("title", "spaces", methods=["post"])
@extend_schema_view(get=extend_schema(summary="List an organization's sites"))
class SiteListApi(generics.ListAPIView):
    """The sites of one of the caller's organizations, published or not (GET, its people);
    create one (POST, its admins) publishing some of its spaces in the order given, served
    on SITES_URL when ``published``."""

    queryset = Site.objects.none()
    serializer_class = SiteOutput
    permission_classes = [ActsByRole]
    access_actions = {"GET": Action.READ, "POST": Action.MANAGE_SITE}

    def organization(self):
        organization = organization_for(self.request, self.kwargs["org"])
        self.check_object_permissions(self.request, organization)
        return organization

    def get_queryset(self):
        return organization_sites(self.organization())

    @extend_schema(
        summary="Create a site",
        request=SiteCreateInput,
        responses={201: SiteOutput},
        examples=[
            OpenApiExample(
                "Two spaces, published",
                value={
                    "title": "Acme docs",
                    "spaces": ["Sp7qK2mXw9RtYb4LcN1s", "Sp3hJ8vQe5WnZa2KdR6t"],
                    "published": True,
                },
                request_only=True,
            )
        ],
    )
    def post(self, request, org):
        organization = self.organization()
        data = SiteCreateInput(data=request.data)
        data.is_valid(raise_exception=True)
        fields = data.validated_data
        site = site_admin.site_create(
            organization=organization,
            title=fields["title"],
            space_ids=fields["spaces"],
            published=fields["published"],
            actor=request.user,
        )
        return Response(SiteOutput(site).data, status=status.HTTP_201_CREATED)


@service_errors("title", "spaces", "audience", "authInstallation", methods=["patch"])
class SiteDetailApi(APIView):
    """A site, with the spaces it publishes in their order (its people read it). PATCH
    changes its title, its spaces and their order, publishes or unpublishes it, or sets its
    audience (``authenticated`` through one of its installations granted
    ``site:visitor:auth``, README "Visitor authentication"); DELETE
    deletes it (the spaces stay): the organization's admins."""

    permission_classes = [ActsByRole]
    access_actions = {"GET": Action.READ, "PATCH": Action.MANAGE_SITE, "DELETE": Action.MANAGE_SITE}
    installation_scopes = {"GET": "site:metadata:read"}

    def site(self, request, site_id) -> Site:
        sites = sites_for(request).select_related("organization").prefetch_related("placements")
        site = get_object_or_404(sites, pk=site_id)
        self.check_object_permissions(request, site)
        return site

    @extend_schema(summary="Get a site", responses=SiteOutput)
    def get(self, request, site_id):
        return Response(SiteOutput(self.site(request, site_id)).data)

    @extend_schema(
        summary="Change a site: title, spaces and their order, publication, audience",
        request=SiteUpdateInput,
        responses=SiteOutput,
        examples=[
            OpenApiExample("Publish", value={"published": True}, request_only=True),
            OpenApiExample(
                "Signed-in visitors only",
                value={"audience": "authenticated", "authInstallation": "In4kT8vQe5WnZa2KdR6t"},
                request_only=True,
            ),
            OpenApiExample(
                "Spaces in a new order",
                value={"spaces": ["Sp3hJ8vQe5WnZa2KdR6t", "Sp7qK2mXw9RtYb4LcN1s"]},
                request_only=True,
            ),
        ],
    )
    def patch(self, request, site_id):
        site = self.site(request, site_id)
        data = SiteUpdateInput(data=request.data)
        data.is_valid(raise_exception=True)
        fields = data.validated_data
        site_admin.site_update(
            site=site,
            actor=request.user,
            title=fields.get("title"),
            space_ids=fields.get("spaces"),
            published=fields.get("published"),
            audience=fields.get("audience"),
            auth_installation=fields.get("authInstallation"),
        )
        return Response(SiteOutput(self.site(request, site_id)).data)

    @extend_schema(summary="Delete a site (its spaces stay)", responses={204: None})
    def delete(self, request, site_id):
        site_admin.site_delete(site=self.site(request, site_id), actor=request.user)
        return Response(status=status.HTTP_204_NO_CONTENT)


class EventFilter(QueryParameters):
    type = EventTypeField(required=False, help_text="Only events of this type.")


class EventListApi(generics.ListAPIView):
    """The events fired in one of the caller's organizations, newest first, paged by cursor."""

    queryset = Event.objects.none()
    serializer_class = EventOutput
    pagination_class = NewestFirstCursorPagination
    permission_classes = [ActsByRole]
    access_actions = {"GET": Action.READ}

    @extend_schema(
        summary="List the events fired in an organization",
        description="Newest first, `limit` at a time (default 50); `next` and `previous` link "
        "the older and newer pages (a `cursor` each), null at either end. Events are kept "
        "`EVENT_RETENTION_DAYS` (90) once their deliveries are settled.",
        parameters=[EventFilter],
    )
    def get(self, request, *args, **kwargs):
        return super().get(request, *args, **kwargs)

    def get_queryset(self):
        organization = organization_for(self.request, self.kwargs["org"])
        self.check_object_permissions(self.request, organization)
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

    def site(self, site_id: str) -> Site:
        """A published site; 403 for an authenticated one, whose visitors the beacon cannot
        tell (their session is a cookie of ``SITES_URL``): its own pages record what they
        do."""
        site = site_selectors.site_for_visitors(site_id)
        if site.authenticated:
            raise PermissionDenied(
                "this site lets in only signed-in visitors: its own pages record their views "
                "and feedback"
            )
        return site

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
        site = self.site(site_id)
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
        site = self.site(site_id)
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
