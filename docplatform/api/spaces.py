"""REST API of the host platform: spaces and their content (revisions, pages) and space
views (Git sync: ``gitsync.api``).

Members of an organization (any role) read and act on its spaces; anyone else gets 404. An
installation token reaches the spaces its installation covers, as far as its integration's
scopes allow (``installation_scopes`` on each view).
"""

from django.shortcuts import get_object_or_404
from drf_spectacular.utils import OpenApiExample, extend_schema, extend_schema_view
from rest_framework import exceptions, generics, serializers, status
from rest_framework.response import Response
from rest_framework.views import APIView

from .. import services
from ..documents import access
from ..models import Page, Revision, Space
from ..principals import is_machine
from ..selectors import current_pages, organization_spaces, revisions_of, space_revisions
from .lookup import organization_for, space_for, spaces_for
from .permissions import IsPersonOrScopedInstallation
from .schema import service_errors
from .visitors import remember_visitor, visitor_from

# --- Representations ------------------------------------------------------------------------


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


# --- Spaces ---------------------------------------------------------------------------------


@extend_schema_view(get=extend_schema(summary="List an organization's spaces"))
class SpaceListApi(generics.ListAPIView):
    """The spaces of one of the caller's organizations."""

    queryset = Space.objects.none()
    serializer_class = SpaceOutput

    def get_queryset(self):
        return organization_spaces(organization_for(self.request, self.kwargs["org"]))


def check_person_may(request, space, rule, refusal: str) -> None:
    """A person (not an installation's token, whose scopes decide) may do this to the space
    by their role in its organization (``documents.access``); else 403 naming why."""
    if is_machine(request.user):
        return
    if not rule(access.role_in(request.user, space.organization_id)):
        raise exceptions.PermissionDenied(refusal)


class RevisionConflictError(exceptions.APIException):
    status_code = status.HTTP_409_CONFLICT
    default_code = "conflict"


class SpaceVisibilityInput(serializers.Serializer):
    visibility = serializers.ChoiceField(choices=Space.Visibility.choices)


class SpaceDetailApi(APIView):
    """A space; PATCH changes its visibility (fires ``space_visibility_updated``)."""

    permission_classes = [IsPersonOrScopedInstallation]
    installation_scopes = {"GET": "space:metadata:read", "PATCH": "space:metadata:write"}

    @extend_schema(summary="Get a space", responses=SpaceOutput)
    def get(self, request, space_id):
        return Response(SpaceOutput(space_for(request, space_id)).data)

    @extend_schema(
        summary="Change a space's visibility",
        request=SpaceVisibilityInput,
        responses=SpaceOutput,
        examples=[OpenApiExample("Public", value={"visibility": "public"}, request_only=True)],
    )
    def patch(self, request, space_id):
        space = space_for(request, space_id)
        check_person_may(
            request, space, access.may_administer, "only the organization's admins may do this"
        )
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
    baseRevision = serializers.CharField(
        required=False,
        max_length=32,
        help_text="The revision these pages were edited from: when the space's current "
        "revision is another one by now, nothing is written and the answer is 409 (nothing "
        "another writer saved meanwhile is overwritten).",
    )


@service_errors("pages", methods=["post"])
@service_errors("pages.INDEX", codes=("null",), methods=["post"])  # a null page
@extend_schema_view(get=extend_schema(summary="List a space's revisions"))
class SpaceRevisionsApi(generics.ListAPIView):
    """A space's revisions, newest first; POST writes a new one (fires
    ``space_content_updated``)."""

    queryset = Revision.objects.none()
    serializer_class = RevisionOutput
    permission_classes = [IsPersonOrScopedInstallation]
    installation_scopes = {"GET": "space:content:read", "POST": "space:content:write"}

    def get_queryset(self):
        space = space_for(self.request, self.kwargs["space_id"])
        return space_revisions(space)

    @extend_schema(
        summary="Write a new revision of a space's pages",
        request=RevisionInput,
        responses={201: RevisionOutput},
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
        space = space_for(request, space_id)
        check_person_may(request, space, access.may_edit, access.edit_refusal("reader"))
        data = RevisionInput(data=request.data)
        data.is_valid(raise_exception=True)
        try:
            revision = services.space_content_update(
                space=space,
                pages=data.validated_data["pages"],
                message=data.validated_data["message"],
                author=None if is_machine(request.user) else request.user,
                based_on=data.validated_data.get("baseRevision"),
            )
        except services.RevisionConflict as conflict:
            current = conflict.current.id if conflict.current else None
            raise RevisionConflictError(
                f"the space's current revision is {current} now, not baseRevision: read it and "
                "apply your change to it"
            ) from None
        return Response(RevisionOutput(revision).data, status=status.HTTP_201_CREATED)


@extend_schema_view(get=extend_schema(summary="List the pages of a space's current revision"))
class SpacePagesApi(generics.ListAPIView):
    """The pages of a space's current revision."""

    queryset = Page.objects.none()
    serializer_class = PageOutput
    permission_classes = [IsPersonOrScopedInstallation]
    installation_scopes = {"GET": "space:content:read"}

    def get_queryset(self):
        space = space_for(self.request, self.kwargs["space_id"])
        return current_pages(space)


@extend_schema_view(get=extend_schema(summary="List the pages of a revision"))
class RevisionPagesApi(generics.ListAPIView):
    """The pages of one revision."""

    queryset = Page.objects.none()
    serializer_class = PageOutput
    permission_classes = [IsPersonOrScopedInstallation]
    installation_scopes = {"GET": "space:content:read"}

    def get_queryset(self):
        revisions = revisions_of(spaces_for(self.request))
        revision = get_object_or_404(revisions, pk=self.kwargs["revision_id"])
        return revision.pages.all()


class SpaceViewApi(APIView):
    """Record that the caller viewed the space (fires ``space_view``); the visitor is taken
    from the request."""

    @extend_schema(
        summary="Record that the caller viewed a space", request=None, responses={204: None}
    )
    def post(self, request, space_id):
        space = space_for(request, space_id)
        visitor = visitor_from(request)
        services.space_view_record(space=space, visitor=visitor)
        response = Response(status=status.HTTP_204_NO_CONTENT)
        remember_visitor(response, request, visitor)
        return response
