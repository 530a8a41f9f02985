"""REST API of spaces: create, list, change and delete them, and a read counted as a space
view (their content: ``revisions``, ``pages``, ``page_restore``; Git sync: ``gitsync.api``).

An organization's people act on its spaces as the access module's table lets their role
(``ActsByRole``: ``access_actions`` on each view): everyone reads, admins and members write
pages and create spaces, admins change and delete them; anyone else gets 404. An installation
token reaches the spaces its installation covers, as far as its integration's scopes allow
(``installation_scopes`` on each view); a revision it writes records it as its author.
"""

from drf_spectacular.utils import (
    OpenApiExample,
    extend_schema,
    extend_schema_field,
    extend_schema_view,
)
from rest_framework import generics, serializers, status
from rest_framework.response import Response
from rest_framework.views import APIView

from ...access import Action
from ...api.lookup import organization_for, space_for
from ...api.permissions import ActsByRole
from ...api.schema import service_errors
from ...models import Space
from ...selectors import organization_spaces
from ...spaces import services as space_services
from ...visitors import remember_visitor, space_reader
from .. import visits

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


# --- Spaces ---------------------------------------------------------------------------------


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
