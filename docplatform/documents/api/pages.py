"""REST API of the host platform: one page of a space read, written or deleted on its own
(``GET``, ``PUT``, ``DELETE /api/v1/spaces/{id}/pages/{path}``). A write makes a revision that
writes this page alone, through the editor's services (``documents.services``): with
``baseRevision``, a change made meanwhile to this page is merged line by line, and only
overlapping changes answer 409; without it, the page is written over whatever it is now."""

import re

from django.core.exceptions import ValidationError
from django.http import Http404
from drf_spectacular.utils import OpenApiExample, OpenApiParameter, extend_schema
from rest_framework import serializers, status
from rest_framework.response import Response
from rest_framework.views import APIView

from ...access import Action
from ...api.inputs import ObjectIdConverter
from ...api.lookup import space_for
from ...api.permissions import ActsByRole
from ...api.schema import service_errors
from ...content import page_path_problem
from ...merging import PageClash
from ...models import Revision
from ...page_versions import page_at
from .. import services as page_services
from .content_conflicts import CONTENT_CONFLICT, content_conflict_response
from .revisions import PageOutput, RevisionOutput, require_direct_save


class PageWriteInput(serializers.Serializer):
    title = serializers.CharField(max_length=300)
    body = serializers.CharField(allow_blank=True, default="", trim_whitespace=False)
    condition = serializers.CharField(
        allow_blank=True,
        required=False,
        help_text="Adaptive content: a condition on the visitor's claims; absent keeps the "
        'page\'s (none for a new page), "" removes it.',
    )
    path = serializers.CharField(
        max_length=300,
        required=False,
        help_text="A new path for the page (it moves there); absent keeps the one in the URL.",
    )
    message = serializers.CharField(max_length=500, allow_blank=True, default="")
    baseRevision = serializers.CharField(
        required=False,
        max_length=32,
        help_text="The revision the page was read from: a change made to this page since is "
        "merged with this one, and overlapping changes answer 409 with the hunks. Absent: the "
        "page is written over whatever it is now.",
    )


OBJECT_ID = re.compile(ObjectIdConverter.regex)


class PageWriteOutput(serializers.Serializer):
    revision = RevisionOutput()
    page = PageOutput()


@service_errors("title", "body", "condition", "path", "baseRevision", methods=["put"])
@service_errors("path", "baseRevision", methods=["delete"])
class SpacePageApi(APIView):
    """One page of a space's current revision."""

    permission_classes = [ActsByRole]
    access_actions = {"GET": Action.READ, "PUT": Action.EDIT_CONTENT, "DELETE": Action.EDIT_CONTENT}
    installation_scopes = {
        "GET": "space:content:read",
        "PUT": "space:content:write",
        "DELETE": "space:content:write",
    }

    def space(self, request, space_id, page_path, *, writing: bool):
        space = space_for(request, space_id)
        self.check_object_permissions(request, space)
        if writing:
            require_direct_save(request.user, space)
        if page_path_problem(page_path):
            raise Http404("No page has this path.")
        return space

    @extend_schema(summary="Read one page of a space's current revision", responses=PageOutput)
    def get(self, request, space_id, page_path):
        space = self.space(request, space_id, page_path, writing=False)
        page = page_at(space.current_revision_id, page_path)
        if page is None:
            raise Http404("No page has this path.")
        return Response(PageOutput(page, context={"revision": space.current_revision_id}).data)

    @extend_schema(
        summary="Write one page (create it, or change it), as a new revision",
        request=PageWriteInput,
        responses={200: PageWriteOutput, 201: PageWriteOutput, 409: CONTENT_CONFLICT},
        examples=[
            OpenApiExample(
                "Edit a page read from a revision",
                value={
                    "title": "Install",
                    "body": "# Install\n\nRun `pip install acme`.\n",
                    "baseRevision": "Rv2mXw9RtYb4LcN1sQ7k",
                },
                request_only=True,
            )
        ],
    )
    def put(self, request, space_id, page_path):
        space = self.space(request, space_id, page_path, writing=True)
        data = PageWriteInput(data=request.data)
        data.is_valid(raise_exception=True)
        values = data.validated_data
        based_on = _base_revision(space, values) or space.current_revision_id
        now = page_at(space.current_revision_id, page_path)
        then = page_at(based_on, page_path) if based_on else None
        if "baseRevision" in values and then is None and now is not None:
            return _conflict(
                space,
                PageClash(path=page_path),
                "another page was written at this path since baseRevision: read it, and "
                "write again from the current revision",
            )
        if "baseRevision" in values and then is not None and now is None:
            return _conflict(
                space,
                PageClash(path=page_path, deleted_by="theirs"),
                "the page was deleted since baseRevision: write it again without "
                "baseRevision to bring it back",
            )
        try:
            if now is None:
                revision = page_services.page_create(
                    space=space,
                    path=values.get("path", page_path),
                    title=values["title"],
                    body=values["body"],
                    condition=values.get("condition", ""),
                    message=values["message"],
                    author=request.user,
                )
            else:
                revision = page_services.page_save(
                    space=space,
                    path=page_path,
                    new_path=values.get("path"),
                    title=values["title"],
                    body=values["body"],
                    condition=values.get("condition"),
                    message=values["message"],
                    author=request.user,
                    based_on=based_on,
                )
        except page_services.PageConflict as conflict:
            return _page_conflict(page_path, conflict)
        written = page_at(revision, values.get("path", page_path))
        answer = PageWriteOutput(
            {"revision": revision, "page": written}, context={"revision": revision.pk}
        )
        return Response(answer.data, status=status.HTTP_201_CREATED if now is None else 200)

    @extend_schema(
        summary="Delete one page, as a new revision",
        parameters=[
            OpenApiParameter(
                "baseRevision",
                str,
                description="The revision the page was read from: when the page changed "
                "since, nothing is deleted (409).",
            )
        ],
        responses={200: RevisionOutput, 409: CONTENT_CONFLICT},
    )
    def delete(self, request, space_id, page_path):
        space = self.space(request, space_id, page_path, writing=True)
        given = request.query_params
        based_on = _base_revision(space, given) or space.current_revision_id
        if based_on is None or page_at(based_on, page_path) is None:
            if "baseRevision" in given:
                raise ValidationError({"path": ["no page has this path in that revision"]})
            raise Http404("No page has this path.")
        try:
            revision = page_services.page_delete(
                space=space, path=page_path, author=request.user, based_on=based_on
            )
        except page_services.PageConflict as conflict:
            return _page_conflict(page_path, conflict)
        return Response(RevisionOutput(revision).data)


def _base_revision(space, values: dict) -> str | None:
    """The ``baseRevision`` given, when it is a revision of the space (else a 400 naming it)."""
    based_on = values.get("baseRevision")
    if based_on is None:
        return None
    known = Revision.objects.filter(pk=based_on, space=space)
    if not OBJECT_ID.fullmatch(based_on) or not known.exists():
        raise ValidationError({"baseRevision": ["is not a revision of this space"]})
    return based_on


class _Conflict:
    def __init__(self, current, clashes):
        self.current, self.clashes = current, clashes


def _page_conflict(path: str, conflict: page_services.PageConflict) -> Response:
    clash = conflict.clash or PageClash(
        path=path, deleted_by="theirs" if conflict.theirs is None else "mine"
    )
    return content_conflict_response(_Conflict(conflict.current, [clash]))


def _conflict(space, clash: PageClash, detail: str) -> Response:
    """409 for a page written or deleted by someone else since the base revision."""
    return content_conflict_response(_Conflict(space.current_revision, [clash]), detail=detail)
