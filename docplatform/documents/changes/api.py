"""REST API of change requests (``/api/v1/spaces/{id}/change-requests/...``): open, list,
read and change them (subject, description, reviewers, close and reopen), read and write
their pages, review and merge them (``changes.services``).

Who may: the access module's table through ``ActsByRole``: everyone of the organization
reads, admins and members open, edit, review (never their own) and merge; readers get 403,
anyone else 404. A merge refused by a merge rule, or meeting overlapping changes, answers 409
naming the rule or the pages and hunks; nothing is written then."""

from drf_spectacular.utils import (
    OpenApiExample,
    OpenApiResponse,
    PolymorphicProxySerializer,
    extend_schema,
    extend_schema_field,
    extend_schema_view,
    inline_serializer,
)
from rest_framework import generics, serializers, status
from rest_framework.response import Response
from rest_framework.views import APIView

from ...access import Action
from ...api.lookup import space_for
from ...api.permissions import ActsByRole
from ...api.schema import service_errors
from ..api.content_conflicts import CONTENT_CONFLICT, content_conflict_response
from ..api.revisions import PageInput, RevisionOutput
from . import selectors, services
from .models import ChangeRequest, Review

REFUSED = OpenApiResponse(
    inline_serializer(
        "ChangeRequestRefused",
        {
            "type": serializers.CharField(help_text="client_error"),
            "errors": inline_serializer(
                "ChangeRequestRefusedRule",
                {
                    "code": serializers.CharField(help_text="refused"),
                    "detail": serializers.CharField(),
                    "attr": serializers.ChoiceField(
                        choices=["status", "requiredApprovals", "upToDate", "changes"],
                        help_text="The rule that is not met.",
                    ),
                },
                many=True,
            ),
        },
    ),
    description="A rule is not met (each error names one): nothing was written.",
)

MERGE_REFUSED = OpenApiResponse(
    PolymorphicProxySerializer(
        component_name="ChangeRequestMergeRefused",
        serializers=[REFUSED.response, CONTENT_CONFLICT.response],
        resource_type_field_name=None,
    ),
    description="A merge rule is not met, or the space changed the same lines since the "
    "change request's base (``conflicts``): nothing was written.",
)


def refused_response(refusal: services.ChangeRequestRefused) -> Response:
    errors = [
        {"code": "refused", "detail": blocker.detail, "attr": blocker.rule}
        for blocker in refusal.blockers
    ]
    return Response({"type": "client_error", "errors": errors}, status=status.HTTP_409_CONFLICT)


def conflict_response(conflict: services.ChangeRequestConflict) -> Response:
    if conflict.current is not None:
        detail = (
            "the space changed the same lines since the change request's base: update the "
            "change request from the space, resolving these in it, then merge"
        )
        return content_conflict_response(conflict, detail=detail, attr=None)
    detail = (
        "the change request was written since basedOn, and those changes overlap these: "
        "resolve each hunk and write again from its latest revision"
    )
    return content_conflict_response(conflict, detail=detail, attr="basedOn")


# --- Representations ------------------------------------------------------------------------


class ReviewOutput(serializers.Serializer):
    reviewer = serializers.CharField(source="reviewer.username")
    status = serializers.ChoiceField(choices=Review.Verdict.choices)
    comment = serializers.CharField()
    createdAt = serializers.DateTimeField(source="created_at")


class BlockerOutput(serializers.Serializer):
    rule = serializers.CharField()
    detail = serializers.CharField()


class ChangeRequestOutput(serializers.Serializer):
    number = serializers.IntegerField()
    space = serializers.CharField(source="space_id")
    subject = serializers.CharField()
    description = serializers.CharField()
    status = serializers.ChoiceField(choices=ChangeRequest.Status.choices)
    author = serializers.CharField(source="author.username", allow_null=True, default=None)
    baseRevision = serializers.CharField(source="base_revision_id", allow_null=True)
    reviewers = serializers.SerializerMethodField()
    approvedBy = serializers.SerializerMethodField(
        help_text="Reviewers whose latest review approves it (never its author)."
    )
    reviews = serializers.SerializerMethodField()
    mergeBlockers = serializers.SerializerMethodField(
        help_text="The merge rules it does not meet yet; empty when it may be merged."
    )
    mergedBy = serializers.CharField(source="merged_by.username", allow_null=True, default=None)
    mergedRevision = serializers.CharField(source="merged_revision_id", allow_null=True)
    createdAt = serializers.DateTimeField(source="created_at")

    def get_reviewers(self, change_request) -> list[str]:
        return sorted(person.get_username() for person in change_request.reviewers.all())

    def get_approvedBy(self, change_request) -> list[str]:
        return selectors.approvers(change_request)

    @extend_schema_field(ReviewOutput(many=True))
    def get_reviews(self, change_request) -> list[dict]:
        return ReviewOutput(selectors.reviews_of(change_request), many=True).data

    @extend_schema_field(BlockerOutput(many=True))
    def get_mergeBlockers(self, change_request) -> list[dict]:
        return [blocker.__dict__ for blocker in selectors.merge_blockers(change_request)]


class ChangeRequestPagesOutput(serializers.Serializer):
    revision = serializers.IntegerField(
        source="pk", help_text="The change request's revision: give it as basedOn when writing."
    )
    baseRevision = serializers.CharField(
        source="change_request.base_revision_id",
        allow_null=True,
        help_text="The space's revision the change request is made from.",
    )
    message = serializers.CharField()
    author = serializers.CharField(source="author.username", allow_null=True, default=None)
    createdAt = serializers.DateTimeField(source="created_at")
    pages = PageInput(many=True)


# --- Views ----------------------------------------------------------------------------------


class ChangeRequestView:
    """Looks up the space (its organization's people; 404 for anyone else), checks the
    method's action, and the change request by its number."""

    permission_classes = [ActsByRole]

    def space(self):
        space = space_for(self.request, self.kwargs["space_id"])
        self.check_object_permissions(self.request, space)
        return space

    def change_request(self) -> ChangeRequest:
        return selectors.change_request_of(self.space(), self.kwargs["number"])


class ChangeRequestOpenInput(serializers.Serializer):
    subject = serializers.CharField(max_length=services.MAX_SUBJECT_LENGTH)
    description = serializers.CharField(
        max_length=services.MAX_DESCRIPTION_LENGTH, allow_blank=True, default=""
    )


@extend_schema_view(get=extend_schema(summary="List a space's change requests"))
class ChangeRequestListApi(ChangeRequestView, generics.ListAPIView):
    """A space's change requests, newest first (``?status=open|merged|closed``); POST opens
    one from the space's current revision (admins and members), numbered next in the space."""

    queryset = ChangeRequest.objects.none()
    serializer_class = ChangeRequestOutput
    access_actions = {"GET": Action.READ, "POST": Action.EDIT_CONTENT}

    def get_queryset(self):
        wanted = self.request.query_params.get("status")
        return selectors.change_requests_of(
            self.space(), status=wanted if wanted in ChangeRequest.Status.values else None
        )

    @extend_schema(
        summary="Open a change request",
        request=ChangeRequestOpenInput,
        responses={201: ChangeRequestOutput},
        examples=[
            OpenApiExample(
                "A new guide",
                value={"subject": "Install guide", "description": "For 2.0"},
                request_only=True,
            )
        ],
    )
    def post(self, request, space_id):
        space = self.space()
        data = ChangeRequestOpenInput(data=request.data)
        data.is_valid(raise_exception=True)
        change_request = services.change_request_open(
            space=space, actor=request.user, **data.validated_data
        )
        return Response(ChangeRequestOutput(change_request).data, status=status.HTTP_201_CREATED)


class ChangeRequestUpdateInput(serializers.Serializer):
    subject = serializers.CharField(max_length=services.MAX_SUBJECT_LENGTH, required=False)
    description = serializers.CharField(
        max_length=services.MAX_DESCRIPTION_LENGTH, allow_blank=True, required=False
    )
    reviewers = serializers.ListField(
        child=serializers.CharField(max_length=150),
        max_length=50,
        required=False,
        help_text="Who is asked to review it (usernames): every one replaces the list.",
    )
    status = serializers.ChoiceField(
        choices=[ChangeRequest.Status.OPEN, ChangeRequest.Status.CLOSED], required=False
    )

    def validate(self, data):
        if not data:
            raise serializers.ValidationError("give subject, description, reviewers or status")
        return data


@service_errors("reviewers", "status", methods=["patch"])
class ChangeRequestDetailApi(ChangeRequestView, APIView):
    """A change request, with its reviewers, reviews and the merge rules it does not meet
    yet. PATCH changes its subject or description, asks for reviewers, closes or reopens it
    (admins and members)."""

    access_actions = {"GET": Action.READ, "PATCH": Action.EDIT_CONTENT}

    @extend_schema(summary="Get a change request", responses=ChangeRequestOutput)
    def get(self, request, space_id, number):
        return Response(ChangeRequestOutput(self.change_request()).data)

    @extend_schema(
        summary="Change, close, reopen a change request or ask for reviewers",
        request=ChangeRequestUpdateInput,
        responses={200: ChangeRequestOutput, 409: REFUSED},
        examples=[
            OpenApiExample("Reviewers", value={"reviewers": ["carol"]}, request_only=True),
            OpenApiExample("Closed", value={"status": "closed"}, request_only=True),
        ],
    )
    def patch(self, request, space_id, number):
        change_request = self.change_request()
        data = ChangeRequestUpdateInput(data=request.data)
        data.is_valid(raise_exception=True)
        change_request = services.change_request_update(
            change_request=change_request, actor=request.user, **data.validated_data
        )
        return Response(ChangeRequestOutput(change_request).data)


class ChangeRequestPagesInput(serializers.Serializer):
    message = serializers.CharField(max_length=500, allow_blank=True, default="")
    pages = serializers.ListField(child=PageInput(), allow_empty=False, max_length=1000)
    basedOn = serializers.IntegerField(
        required=False,
        help_text="The change request's revision these pages were edited from: when it has "
        "a newer one by now, these are merged with it; 409 with the hunks when they overlap.",
    )
    spaceRevision = serializers.CharField(
        required=False,
        max_length=32,
        help_text="Make this revision of the space the change request's base: these pages "
        "resolve what the space changed since (after a merge answered 409).",
    )


@service_errors("pages", "basedOn", "spaceRevision", methods=["post"])
@service_errors("pages.INDEX", codes=("null",), methods=["post"])
class ChangeRequestPagesApi(ChangeRequestView, APIView):
    """The change request's pages (its latest revision); POST writes a new revision of them
    (admins and members, while it is open). The space is not touched until it is merged."""

    access_actions = {"GET": Action.READ, "POST": Action.EDIT_CONTENT}

    @extend_schema(summary="Get a change request's pages", responses=ChangeRequestPagesOutput)
    def get(self, request, space_id, number):
        return Response(ChangeRequestPagesOutput(selectors.head_of(self.change_request())).data)

    @extend_schema(
        summary="Write a change request's pages",
        request=ChangeRequestPagesInput,
        responses={201: ChangeRequestPagesOutput, 409: CONTENT_CONFLICT},
        examples=[
            OpenApiExample(
                "One page",
                value={
                    "message": "Add the install guide",
                    "basedOn": 12,
                    "pages": [{"path": "install", "title": "Install", "body": "# Install\n"}],
                },
                request_only=True,
            )
        ],
    )
    def post(self, request, space_id, number):
        change_request = self.change_request()
        data = ChangeRequestPagesInput(data=request.data)
        data.is_valid(raise_exception=True)
        try:
            written = services.change_request_pages_write(
                change_request=change_request,
                pages=data.validated_data["pages"],
                actor=request.user,
                message=data.validated_data["message"],
                based_on=data.validated_data.get("basedOn"),
                space_revision=data.validated_data.get("spaceRevision"),
            )
        except services.ChangeRequestRefused as refusal:
            return refused_response(refusal)
        except services.ChangeRequestConflict as conflict:
            return conflict_response(conflict)
        return Response(ChangeRequestPagesOutput(written).data, status=status.HTTP_201_CREATED)


class ReviewInput(serializers.Serializer):
    status = serializers.ChoiceField(choices=Review.Verdict.choices)
    comment = serializers.CharField(
        max_length=services.MAX_DESCRIPTION_LENGTH, allow_blank=True, default=""
    )


@service_errors("status", methods=["post"])
class ChangeRequestReviewsApi(ChangeRequestView, APIView):
    """Review a change request: approve it or request changes (admins and members but its
    author; a reviewer's latest review is the one that counts)."""

    access_actions = {"POST": Action.REVIEW_CHANGE_REQUEST}

    @extend_schema(
        summary="Review a change request",
        request=ReviewInput,
        responses={201: ReviewOutput, 409: REFUSED},
        examples=[
            OpenApiExample(
                "Approved", value={"status": "approved", "comment": "Clear."}, request_only=True
            )
        ],
    )
    def post(self, request, space_id, number):
        change_request = self.change_request()
        data = ReviewInput(data=request.data)
        data.is_valid(raise_exception=True)
        try:
            review = services.change_request_review(
                change_request=change_request, reviewer=request.user, **data.validated_data
            )
        except services.ChangeRequestRefused as refusal:
            return refused_response(refusal)
        return Response(ReviewOutput(review).data, status=status.HTTP_201_CREATED)


class ChangeRequestMergeApi(ChangeRequestView, APIView):
    """Merge a change request onto the space: one new revision (``space_content_updated``
    fires once). 409 naming each unmet merge rule, or the pages and hunks where the space
    changed the same lines since (resolve them in the change request, then merge)."""

    access_actions = {"POST": Action.MERGE_CHANGE_REQUEST}

    @extend_schema(
        summary="Merge a change request",
        request=None,
        responses={201: RevisionOutput, 409: MERGE_REFUSED},
    )
    def post(self, request, space_id, number):
        change_request = self.change_request()
        try:
            revision = services.change_request_merge(
                change_request=change_request, actor=request.user
            )
        except services.ChangeRequestRefused as refusal:
            return refused_response(refusal)
        except services.ChangeRequestConflict as conflict:
            return conflict_response(conflict)
        return Response(RevisionOutput(revision).data, status=status.HTTP_201_CREATED)
