"""REST API of a space's content: its revisions (the history, and a new one: the whole set of
pages, from a base revision, merged by the space's rules), its current pages and a
revision's. A page alone: ``pages``; a revision restored: ``page_restore``."""

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

from ...access import DIRECT_SAVE_REFUSAL, Action, may_save_directly
from ...api.inputs import LargeRequestBody
from ...api.lookup import space_for, spaces_for
from ...api.permissions import ActsByRole
from ...api.schema import service_errors
from ...models import Page, Revision, Space
from ...page_versions import ORDER, pages_at
from ...selectors import current_pages, revisions_of, space_revisions
from .. import services as page_services
from .content_conflicts import CONTENT_CONFLICT, content_conflict_response


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


def require_direct_save(actor, space: Space) -> None:
    """403 naming why for a member of a space that takes edits through change requests only."""
    if not may_save_directly(actor, space):
        raise PermissionDenied(DIRECT_SAVE_REFUSAL)


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
