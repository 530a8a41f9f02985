"""REST API of the host platform: spaces (create, change, delete), their content (revisions,
pages) and space views (Git sync: ``gitsync.api``).

An organization's people act on its spaces as the access module's table lets their role
(``ActsByRole``: ``access_actions`` on each view): everyone reads, admins and members write
pages and create spaces, admins change and delete them; anyone else gets 404. An installation
token reaches the spaces its installation covers, as far as its integration's scopes allow
(``installation_scopes`` on each view); a revision it writes records it as its author.
"""

from django.conf import settings
from django.core.exceptions import PermissionDenied
from django.shortcuts import get_object_or_404
from drf_spectacular.utils import (
    OpenApiExample,
    extend_schema,
    extend_schema_field,
    extend_schema_view,
)
from rest_framework import generics, serializers, status
from rest_framework.response import Response
from rest_framework.views import APIView

from ...access import DIRECT_SAVE_REFUSAL, Action, may_save_directly
from ...api.inputs import LargeRequestBody
from ...api.lookup import organization_for, space_for, spaces_for
from ...api.permissions import ActsByRole
from ...api.schema import service_errors
from ...models import Page, Revision, Space
from ...page_versions import ORDER, pages_at
from ...selectors import current_pages, organization_spaces, revisions_of, space_revisions
from ...spaces import services as space_services
from ...visitors import remember_visitor, space_reader
from .. import services as page_services
from .. import visits
from .content_conflicts import CONTENT_CONFLICT, content_conflict_response

# --- Representations ------------------------------------------------------------------------


class MergeRules(serializers.Serializer):
    requiredApprovals = serializers.IntegerField(
        min_value=0,
        max_value=20,
        help_text="Approvals by reviewers other than its author a change request needs.",
    )
    upToDate = serializers.BooleanField(
        help_text="A change request is merged only when made from the space's current revision."
    )


class SpaceOutput(serializers.Serializer):
    id = serializers.CharField()
    organization = serializers.CharField(source="organization_id")
    title = serializers.CharField()
    visibility = serializers.ChoiceField(choices=Space.Visibility.choices)
    currentRevision = serializers.CharField(source="current_revision_id", allow_null=True)
    readersMayComment = serializers.BooleanField(
        source="readers_may_comment",
        help_text="Whether the organization's readers may comment on its pages (admins and "
        "members always may).",
    )
    mergeRules = serializers.SerializerMethodField(
        help_text="What a change request needs before it is merged."
    )
    changeRequestsOnly = serializers.BooleanField(
        source="change_requests_only",
        help_text="Members edit through change requests only (admins still save directly).",
    )
    createdAt = serializers.DateTimeField(source="created_at")

    @extend_schema_field(MergeRules)
    def get_mergeRules(self, space) -> dict:
        return {
            "requiredApprovals": space.required_approvals,
            "upToDate": space.require_up_to_date,
        }


class RevisionInstallationOutput(serializers.Serializer):
    id = serializers.CharField(help_text="The installation's id.")
    name = serializers.CharField(help_text="Its integration, as it was called then.")


class RevisionOutput(serializers.Serializer):
    id = serializers.CharField()
    space = serializers.CharField(source="space_id")
    parent = serializers.CharField(source="parent_id", allow_null=True)
    message = serializers.CharField()
    author = serializers.CharField(
        source="author.username",
        allow_null=True,
        default=None,
        help_text="The person who wrote it; null when an integration did (authorInstallation).",
    )
    authorInstallation = serializers.SerializerMethodField(
        help_text="The installation whose token wrote it; null when a person did."
    )
    createdAt = serializers.DateTimeField(source="created_at")

    @extend_schema_field(RevisionInstallationOutput(allow_null=True))
    def get_authorInstallation(self, revision) -> dict | None:
        if not revision.author_installation:
            return None
        return {"id": revision.author_installation, "name": revision.author_label}


class PageOutput(serializers.Serializer):
    id = serializers.CharField(
        help_text="The page's version: the same in every revision that left the page as it is."
    )
    revision = serializers.SerializerMethodField(help_text="The revision listed.")
    path = serializers.CharField()
    title = serializers.CharField()
    body = serializers.CharField()
    condition = serializers.CharField(
        help_text="Adaptive content: published sites show the page only to visitors whose "
        'claims make this condition hold (e.g. visitor.claims.plan == "pro"); "" for every '
        "visitor."
    )

    def get_revision(self, page) -> str:
        return self.context["revision"]


# --- Spaces ---------------------------------------------------------------------------------


def require_direct_save(actor, space: Space) -> None:
    """403 naming why for a member of a space that takes edits through change requests only."""
    if not may_save_directly(actor, space):
        raise PermissionDenied(DIRECT_SAVE_REFUSAL)


class SpaceCreateInput(serializers.Serializer):
    title = serializers.CharField(max_length=200)
    visibility = serializers.ChoiceField(
        choices=Space.Visibility.choices, default=Space.Visibility.PRIVATE
    )


@service_errors("title", methods=["post"])
@extend_schema_view(get=extend_schema(summary="List an organization's spaces"))
class SpaceListApi(generics.ListAPIView):
    """The spaces of one of the caller's organizations (GET, its people); create one (POST,
    its admins and members: readers get 403), empty and private unless said."""

    queryset = Space.objects.none()
    serializer_class = SpaceOutput
    permission_classes = [ActsByRole]
    access_actions = {"GET": Action.READ, "POST": Action.CREATE_SPACE}

    def organization(self):
        organization = organization_for(self.request, self.kwargs["org"])
        self.check_object_permissions(self.request, organization)
        return organization

    def get_queryset(self):
        return organization_spaces(self.organization())

    @extend_schema(
        summary="Create a space",
        request=SpaceCreateInput,
        responses={201: SpaceOutput},
        examples=[
            OpenApiExample(
                "A public handbook",
                value={"title": "Handbook", "visibility": "public"},
                request_only=True,
            )
        ],
    )
    def post(self, request, org):
        organization = self.organization()
        data = SpaceCreateInput(data=request.data)
        data.is_valid(raise_exception=True)
        space = space_services.space_create(
            organization=organization, actor=request.user, **data.validated_data
        )
        return Response(SpaceOutput(space).data, status=status.HTTP_201_CREATED)


class MergeRulesInput(serializers.Serializer):
    requiredApprovals = serializers.IntegerField(min_value=0, max_value=20, required=False)
    upToDate = serializers.BooleanField(required=False)


class SpaceUpdateInput(serializers.Serializer):
    title = serializers.CharField(max_length=200, required=False)
    visibility = serializers.ChoiceField(choices=Space.Visibility.choices, required=False)
    readersMayComment = serializers.BooleanField(
        required=False, source="readers_may_comment", help_text="Let readers comment."
    )
    mergeRules = MergeRulesInput(required=False)
    changeRequestsOnly = serializers.BooleanField(required=False)

    def validate(self, data):
        if not data:
            raise serializers.ValidationError(
                "give title, visibility, readersMayComment, mergeRules or changeRequestsOnly"
            )
        return data


@service_errors("title", methods=["patch"])
class SpaceDetailApi(APIView):
    """A space (its people read it). PATCH renames it, changes its visibility (which fires
    ``space_visibility_updated``), lets its readers comment, sets its change requests' merge
    rules and whether members edit through change requests only; DELETE deletes it with its
    pages, revisions and the integrations installed into it: the organization's admins; an
    installation token with ``space:metadata:write`` changes it too."""

    permission_classes = [ActsByRole]
    access_actions = {
        "GET": Action.READ,
        "PATCH": Action.MANAGE_SPACE,
        "DELETE": Action.MANAGE_SPACE,
    }
    installation_scopes = {"GET": "space:metadata:read", "PATCH": "space:metadata:write"}

    def space(self, request, space_id) -> Space:
        space = space_for(request, space_id)
        self.check_object_permissions(request, space)
        return space

    @extend_schema(summary="Get a space", responses=SpaceOutput)
    def get(self, request, space_id):
        return Response(SpaceOutput(self.space(request, space_id)).data)

    @extend_schema(
        summary="Change a space: its title, visibility, comments and change requests' rules",
        request=SpaceUpdateInput,
        responses=SpaceOutput,
        examples=[
            OpenApiExample("Public", value={"visibility": "public"}, request_only=True),
            OpenApiExample(
                "Renamed and unlisted",
                value={"title": "Handbook (old)", "visibility": "unlisted"},
                request_only=True,
            ),
            OpenApiExample("Readers comment", value={"readersMayComment": True}, request_only=True),
            OpenApiExample(
                "Reviewed changes only",
                value={
                    "mergeRules": {"requiredApprovals": 1, "upToDate": True},
                    "changeRequestsOnly": True,
                },
                request_only=True,
            ),
        ],
    )
    def patch(self, request, space_id):
        space = self.space(request, space_id)
        data = SpaceUpdateInput(data=request.data)
        data.is_valid(raise_exception=True)
        given = data.validated_data
        rules = given.get("mergeRules", {})
        space = space_services.space_update(
            space=space,
            actor=request.user,
            title=given.get("title"),
            visibility=given.get("visibility"),
            readers_may_comment=given.get("readers_may_comment"),
            required_approvals=rules.get("requiredApprovals"),
            require_up_to_date=rules.get("upToDate"),
            change_requests_only=given.get("changeRequestsOnly"),
        )
        return Response(SpaceOutput(space).data)

    @extend_schema(
        summary="Delete a space with its pages, revisions and installations",
        responses={204: None},
    )
    def delete(self, request, space_id):
        space_services.space_delete(space=self.space(request, space_id), actor=request.user)
        return Response(status=status.HTTP_204_NO_CONTENT)


class PageInput(serializers.Serializer):
    path = serializers.CharField(max_length=300)
    title = serializers.CharField(max_length=300)
    body = serializers.CharField(allow_blank=True, default="", trim_whitespace=False)
    condition = serializers.CharField(
        allow_blank=True,
        required=False,
        help_text="Adaptive content: a condition on the visitor's claims (README, \"Adaptive "
        'content"), e.g. visitor.claims.plan in ["pro", "team"]; absent or "" shows the '
        "page to every visitor. A condition that cannot be parsed is a 400 naming "
        "pages.N.condition and the character where it goes wrong.",
    )


class RevisionInput(serializers.Serializer):
    message = serializers.CharField(max_length=500, allow_blank=True, default="")
    pages = serializers.ListField(child=PageInput(), allow_empty=False)
    baseRevision = serializers.CharField(
        required=False,
        max_length=32,
        help_text="The revision these pages were edited from: when the space's current "
        "revision is another one by now, these pages are merged with what was written since, "
        "page by page and line by line; only when changes overlap is nothing written, and the "
        "answer is 409 with the overlapping hunks (nothing another writer saved meanwhile is "
        "overwritten).",
    )


@service_errors("pages", methods=["post"])
@service_errors("pages.INDEX", codes=("null",), methods=["post"])  # a null page
@extend_schema_view(get=extend_schema(summary="List a space's revisions"))
class SpaceRevisionsApi(LargeRequestBody, generics.ListAPIView):
    """A space's revisions, newest first; POST writes a new one (fires
    ``space_content_updated``)."""

    queryset = Revision.objects.none()
    serializer_class = RevisionOutput
    permission_classes = [ActsByRole]
    access_actions = {"GET": Action.READ, "POST": Action.EDIT_CONTENT}
    installation_scopes = {"GET": "space:content:read", "POST": "space:content:write"}

    def space(self) -> Space:
        space = space_for(self.request, self.kwargs["space_id"])
        self.check_object_permissions(self.request, space)
        return space

    @property
    def max_request_bytes(self) -> int:
        """A whole revision may be large: as many pages as a space holds (SafeJSONParser)."""
        return settings.REVISION_MAX_BYTES

    def get_queryset(self):
        return space_revisions(self.space())

    @extend_schema(
        summary="Write a new revision of a space's pages",
        request=RevisionInput,
        responses={201: RevisionOutput, 409: CONTENT_CONFLICT},
        examples=[
            OpenApiExample(
                "Two pages",
                value={
                    "message": "Add the install guide",
                    "pages": [
                        {"path": "index", "title": "Acme docs", "body": "# Acme docs\n"},
                        {
                            "path": "guide/install",
                            "title": "Install",
                            "body": "# Install\n\nRun `pip install acme`.\n",
                        },
                    ],
                },
                request_only=True,
            )
        ],
    )
    def post(self, request, space_id):
        space = self.space()
        require_direct_save(request.user, space)
        data = RevisionInput(data=request.data)
        data.is_valid(raise_exception=True)
        try:
            revision = page_services.space_pages_write(
                space=space,
                pages=data.validated_data["pages"],
                message=data.validated_data["message"],
                author=request.user,  # a person, or an installation's token (its principal)
                based_on=data.validated_data.get("baseRevision"),
            )
        except page_services.ContentConflict as conflict:
            return content_conflict_response(conflict)
        return Response(RevisionOutput(revision).data, status=status.HTTP_201_CREATED)


@extend_schema_view(get=extend_schema(summary="List the pages of a space's current revision"))
class SpacePagesApi(generics.ListAPIView):
    """The pages of a space's current revision."""

    queryset = Page.objects.none()
    serializer_class = PageOutput
    permission_classes = [ActsByRole]
    access_actions = {"GET": Action.READ}
    installation_scopes = {"GET": "space:content:read"}

    def get_queryset(self):
        space = space_for(self.request, self.kwargs["space_id"])
        self.check_object_permissions(self.request, space)
        self.revision_id = space.current_revision_id
        return current_pages(space).order_by(*ORDER)

    def get_serializer_context(self):
        return super().get_serializer_context() | {"revision": getattr(self, "revision_id", None)}


@extend_schema_view(get=extend_schema(summary="List the pages of a revision"))
class RevisionPagesApi(generics.ListAPIView):
    """The pages of one revision."""

    queryset = Page.objects.none()
    serializer_class = PageOutput
    permission_classes = [ActsByRole]
    access_actions = {"GET": Action.READ}
    installation_scopes = {"GET": "space:content:read"}

    def get_queryset(self):
        revisions = revisions_of(spaces_for(self.request)).select_related("space")
        revision = get_object_or_404(revisions, pk=self.kwargs["revision_id"])
        self.check_object_permissions(self.request, revision.space)
        return pages_at(revision).order_by(*ORDER)

    def get_serializer_context(self):
        return super().get_serializer_context() | {"revision": self.kwargs.get("revision_id")}


class SpaceViewApi(APIView):
    """Record that the caller viewed the space: fires ``space_view`` at most once per visitor,
    space and ``READER_VIEW_INTERVAL``, by the reader's rule (``documents.visits``); the
    visitor is taken from the request (the person calling, their ``dp_visitor`` cookie)."""

    permission_classes = [ActsByRole]
    access_actions = {"POST": Action.READ}

    @extend_schema(
        summary="Record that the caller viewed a space", request=None, responses={204: None}
    )
    def post(self, request, space_id):
        space = space_for(request, space_id)
        self.check_object_permissions(request, space)
        visitor, who = space_reader(request)
        visits.space_view_once(space=space, visitor=visitor, who=who)
        response = Response(status=status.HTTP_204_NO_CONTENT)
        remember_visitor(response, request, visitor)
        return response
