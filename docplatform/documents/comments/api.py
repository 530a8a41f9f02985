"""REST API of comments on a space's pages (``/api/v1/spaces/{id}/comments/``) and on its
change requests (``/api/v1/spaces/{id}/change-requests/{number}/comments/``): the same
threads, rules and roles; neither lists the other's.

The organization's people read every thread of the spaces they read; admins and members
comment, and readers where the space allows it (``Action.COMMENT``: 403 naming who may);
anyone outside the organization gets 404. Comments are the organization's conversation:
anonymous visitors of a public space and installation tokens get none of it (403).
"""

from drf_spectacular.utils import OpenApiExample, extend_schema, extend_schema_field
from rest_framework import generics, serializers, status
from rest_framework.response import Response
from rest_framework.views import APIView

from ...access import Action
from ...api.errors import renamed_error_fields
from ...api.inputs import QueryParameters, TextField
from ...api.lookup import space_for
from ...api.permissions import ActsByRole
from ...api.schema import service_errors
from ...markdown import render_markdown
from ...models import Space
from ..changes import selectors as change_selectors
from ..changes.models import ChangeRequest
from . import selectors, services
from .models import BODY_MAX_LENGTH, Comment

ANCHOR_HELP = (
    'Where on the page: {"heading": "<slug>"} (the anchor of one of its headings), '
    '{"lines": [from, to]} (1-based, inclusive) or null for the whole page.'
)

# --- Representations ------------------------------------------------------------------------


@extend_schema_field(
    {
        "oneOf": [
            {
                "type": "object",
                "properties": {"heading": {"type": "string"}},
                "required": ["heading"],
                "additionalProperties": False,
            },
            {
                "type": "object",
                "properties": {
                    "lines": {
                        "type": "array",
                        "items": {"type": "integer", "minimum": 1},
                        "minItems": 2,
                        "maxItems": 2,
                    }
                },
                "required": ["lines"],
                "additionalProperties": False,
            },
        ],
        "nullable": True,
        "description": ANCHOR_HELP,
    }
)
class AnchorField(serializers.JSONField):
    """Any JSON: the service says what is wrong with it, by field."""


class CommentOutput(serializers.Serializer):
    id = serializers.CharField()
    page = serializers.CharField(source="page_path")
    author = serializers.CharField(source="author.username", allow_null=True, default=None)
    body = serializers.CharField(help_text="Markdown, as written.")
    bodyHtml = serializers.SerializerMethodField(help_text="The body rendered, sanitized.")
    replyTo = serializers.CharField(
        source="reply_to_id", allow_null=True, help_text="The thread's first comment."
    )
    createdAt = serializers.DateTimeField(source="created_at")
    editedAt = serializers.DateTimeField(source="edited_at", allow_null=True)

    def get_bodyHtml(self, comment) -> str:
        return str(render_markdown(comment.body))


class ThreadOutput(CommentOutput):
    anchor = AnchorField(allow_null=True)
    resolved = serializers.BooleanField()
    resolvedBy = serializers.CharField(source="resolved_by.username", allow_null=True, default=None)
    resolvedAt = serializers.DateTimeField(source="resolved_at", allow_null=True)
    replies = CommentOutput(many=True, source="replies.all")


class CommentInput(serializers.Serializer):
    page = TextField(max_length=300, help_text="The page's path.")
    anchor = AnchorField(required=False, allow_null=True, default=None, help_text=ANCHOR_HELP)
    body = TextField(
        allow_blank=True,
        trim_whitespace=False,
        help_text=f"Markdown, 1 to {BODY_MAX_LENGTH:,} characters; @username mentions one "
        "of the organization's people, who is told by e-mail.",
    )
    replyTo = TextField(
        required=False,
        allow_null=True,
        default=None,
        max_length=32,
        help_text="A comment of the same page: the new comment replies to its thread.",
    )


class CommentUpdateInput(serializers.Serializer):
    resolved = serializers.BooleanField(help_text="Resolve (true) or reopen (false) the thread.")


class PageFilter(QueryParameters):
    page = serializers.CharField(max_length=300, help_text="The page's path.")


# --- Comments -------------------------------------------------------------------------------


@service_errors("page", "anchor", "anchor.heading", "anchor.lines", "body", "replyTo",
                methods=["post"])  # fmt: skip
class CommentsApi(generics.ListAPIView):
    """The threads of a page, newest first, each with its replies oldest first (GET, the
    organization's people); a new thread or a reply (POST: admins and members, readers where
    the space allows it)."""

    queryset = Comment.objects.none()
    serializer_class = ThreadOutput
    permission_classes = [ActsByRole]
    access_actions = {"GET": Action.READ, "POST": Action.COMMENT}

    def space(self) -> Space:
        space = space_for(self.request, self.kwargs["space_id"])
        self.check_object_permissions(self.request, space)
        return space

    @extend_schema(summary="List the comment threads of a page", parameters=[PageFilter])
    def get(self, request, *args, **kwargs):
        return super().get(request, *args, **kwargs)

    def get_queryset(self):
        space = self.space()
        query = PageFilter(data=self.request.query_params)
        query.is_valid(raise_exception=True)
        return selectors.threads_of(selectors.page_comments(space, query.validated_data["page"]))

    @extend_schema(
        summary="Comment on a page or reply to a thread",
        request=CommentInput,
        responses={201: ThreadOutput},
        examples=[
            OpenApiExample(
                "On a heading",
                value={
                    "page": "guide/install",
                    "anchor": {"heading": "requirements"},
                    "body": "Is Python 3.12 enough? @carol",
                    "replyTo": None,
                },
                request_only=True,
            ),
            OpenApiExample(
                "On lines",
                value={"page": "guide/install", "anchor": {"lines": [3, 5]}, "body": "Typo."},
                request_only=True,
            ),
            OpenApiExample(
                "A reply",
                value={"page": "guide/install", "body": "Fixed.", "replyTo": "Cm2mXw9RtYb4LcN1"},
                request_only=True,
            ),
        ],
    )
    def post(self, request, space_id):
        space = self.space()
        data = CommentInput(data=request.data)
        data.is_valid(raise_exception=True)
        return self.created(request, data.validated_data, space=space)

    def created(self, request, given: dict, *, space: Space, change_request=None) -> Response:
        """The comment written (on a page, or on ``change_request``): 201 with its thread."""
        with renamed_error_fields(page_path="page", reply_to="replyTo"):
            comment = services.comment_create(
                space=space,
                change_request=change_request,
                page_path=given["page"],
                anchor=given["anchor"],
                body=given["body"],
                reply_to_id=given["replyTo"],
                author=request.user,
            )
        thread = selectors.threads_of(Comment.objects.filter(pk=comment.thread_id)).get()
        return Response(ThreadOutput(thread).data, status=status.HTTP_201_CREATED)


class CommentApi(APIView):
    """One comment's thread resolved or reopened (PATCH: admins, members and the person who
    started the thread); one's own comment deleted (DELETE; a thread's first comment takes
    its replies with it)."""

    permission_classes = [ActsByRole]
    access_actions = {"PATCH": Action.READ, "DELETE": Action.READ}  # the services decide

    def comment(self, request, space_id, comment_id) -> Comment:
        space = space_for(request, space_id)
        self.check_object_permissions(request, space)
        return selectors.comment_in(space, comment_id, change_request=self.change_request_in(space))

    def change_request_in(self, space: Space) -> ChangeRequest | None:
        """The change request whose comments these are (none: the pages')."""
        return None

    @extend_schema(
        summary="Resolve or reopen a comment thread",
        request=CommentUpdateInput,
        responses=ThreadOutput,
        examples=[
            OpenApiExample("Resolved", value={"resolved": True}, request_only=True),
            OpenApiExample("Reopened", value={"resolved": False}, request_only=True),
        ],
    )
    def patch(self, request, space_id, comment_id):
        comment = self.comment(request, space_id, comment_id)
        data = CommentUpdateInput(data=request.data)
        data.is_valid(raise_exception=True)
        thread = services.comment_resolve_set(
            comment=comment, resolved=data.validated_data["resolved"], actor=request.user
        )
        thread = selectors.threads_of(Comment.objects.filter(pk=thread.pk)).get()
        return Response(ThreadOutput(thread).data)

    @extend_schema(summary="Delete one's own comment", responses={204: None})
    def delete(self, request, space_id, comment_id):
        comment = self.comment(request, space_id, comment_id)
        services.comment_delete(comment=comment, actor=request.user)
        return Response(status=status.HTTP_204_NO_CONTENT)


# --- Comments on a change request -----------------------------------------------------------

CHANGE_REQUEST_ANCHOR_HELP = (
    'Where on the page: {"lines": [from, to]} (1-based, inclusive) of the change request\'s '
    "page, or null (always null on the change request as a whole)."
)


class ChangeRequestCommentInput(CommentInput):
    page = TextField(
        required=False,
        allow_blank=True,
        default="",
        max_length=300,
        help_text='One of the change request\'s pages, or "" for the change request as a whole.',
    )
    anchor = AnchorField(
        required=False, allow_null=True, default=None, help_text=CHANGE_REQUEST_ANCHOR_HELP
    )
    replyTo = TextField(
        required=False,
        allow_null=True,
        default=None,
        max_length=32,
        help_text="A comment of the same change request and page: the new comment replies "
        "to its thread.",
    )


class ChangeRequestComments:
    """The change request of the URL, in a space the caller reads."""

    def change_request(self) -> ChangeRequest:
        space = space_for(self.request, self.kwargs["space_id"])
        self.check_object_permissions(self.request, space)
        return change_selectors.change_request_of(space, self.kwargs["number"])


@service_errors("page", "anchor", "anchor.lines", "body", "replyTo", methods=["post"])
class ChangeRequestCommentsApi(ChangeRequestComments, CommentsApi):
    """The threads of a change request (on it as a whole and on its pages), newest first,
    each with its replies oldest first (GET, the organization's people); a new thread or a
    reply (POST: admins and members, readers where the space allows it)."""

    @extend_schema(summary="List the comment threads of a change request")
    def get(self, request, *args, **kwargs):
        return super(CommentsApi, self).get(request, *args, **kwargs)

    def get_queryset(self):
        return selectors.threads_of(selectors.change_request_comments(self.change_request()))

    @extend_schema(
        summary="Comment on a change request or reply to one of its threads",
        request=ChangeRequestCommentInput,
        responses={201: ThreadOutput},
        examples=[
            OpenApiExample(
                "On the change request",
                value={"page": "", "anchor": None, "body": "Ready? @carol", "replyTo": None},
                request_only=True,
            ),
            OpenApiExample(
                "On lines of one of its pages",
                value={"page": "guide/install", "anchor": {"lines": [3, 5]}, "body": "Typo."},
                request_only=True,
            ),
        ],
    )
    def post(self, request, space_id, number):
        change_request = self.change_request()
        data = ChangeRequestCommentInput(data=request.data)
        data.is_valid(raise_exception=True)
        return self.created(
            request,
            data.validated_data,
            space=change_request.space,
            change_request=change_request,
        )


class ChangeRequestCommentApi(CommentApi):
    """One change request comment's thread resolved or reopened (PATCH: admins, members and
    the person who started the thread); one's own comment deleted (DELETE)."""

    def change_request_in(self, space: Space) -> ChangeRequest:
        return change_selectors.change_request_of(space, self.kwargs["number"])

    @extend_schema(
        summary="Resolve or reopen a change request's comment thread",
        request=CommentUpdateInput,
        responses=ThreadOutput,
        examples=[
            OpenApiExample("Resolved", value={"resolved": True}, request_only=True),
            OpenApiExample("Reopened", value={"resolved": False}, request_only=True),
        ],
    )
    def patch(self, request, space_id, number, comment_id):
        return super().patch(request, space_id, comment_id)

    @extend_schema(summary="Delete one's own comment on a change request", responses={204: None})
    def delete(self, request, space_id, number, comment_id):
        return super().delete(request, space_id, comment_id)
