"""REST API of Git sync, under ``/api/v1/spaces/{id}/git/``: the space's connection (GET,
PUT, DELETE), "Sync now" (``sync/``) and "Import" (``import/``), and the syncs' history.

The organization's people (and an installation token with ``space:git:sync``) read the
connection and the syncs; only its admins connect, disconnect and start syncs (the access
module's table, asked through ``ActsByRole``). Credentials are write-only: answers say
whether there are some, never what they are.
"""

from django.http import Http404
from django.shortcuts import get_object_or_404
from drf_spectacular.utils import (
    OpenApiExample,
    OpenApiResponse,
    extend_schema,
    extend_schema_view,
    inline_serializer,
)
from rest_framework import exceptions, generics, serializers, status
from rest_framework.response import Response
from rest_framework.views import APIView

from ..access import Action
from ..api.lookup import space_for
from ..api.permissions import ActsByRole
from ..api.schema import service_errors
from . import selectors, services
from .models import GitSync

READ_SCOPES = {"GET": "space:git:sync"}


class SpaceGitApi(APIView):
    """A view of one space's Git sync: the space looked up for the caller and its role
    checked by the access module's table for the request's method."""

    permission_classes = [ActsByRole]
    access_actions = {
        "GET": Action.READ,
        "PUT": Action.MANAGE_SPACE,
        "POST": Action.MANAGE_SPACE,
        "DELETE": Action.MANAGE_SPACE,
    }
    installation_scopes = READ_SCOPES

    def space(self, request, space_id):
        space = space_for(request, space_id)
        self.check_object_permissions(request, space)
        return space


class GitConnectionOutput(serializers.Serializer):
    url = serializers.CharField()
    branch = serializers.CharField()
    syncOnRevision = serializers.BooleanField(source="sync_on_revision")
    credentialsSet = serializers.SerializerMethodField(
        help_text="Whether credentials are saved (they are never shown)."
    )
    createdAt = serializers.DateTimeField(source="created_at")
    updatedAt = serializers.DateTimeField(source="updated_at")

    def get_credentialsSet(self, connection) -> bool:
        return bool(connection.credentials)


class GitCredentialsInput(serializers.Serializer):
    username = serializers.CharField(max_length=services.MAX_USERNAME_LENGTH)
    password = serializers.CharField(
        max_length=services.MAX_PASSWORD_LENGTH,
        trim_whitespace=False,
        help_text="A password or an access token.",
    )


class GitConnectionInput(serializers.Serializer):
    url = serializers.CharField(
        max_length=2000,
        help_text="An https:// or ssh:// address, or an absolute path on the workers' disk; "
        "it must match one of the operator's GIT_SYNC_ALLOWED patterns.",
    )
    branch = serializers.CharField(max_length=255, default="main")
    syncOnRevision = serializers.BooleanField(
        default=False, help_text="Write every new revision to the branch."
    )
    credentials = GitCredentialsInput(
        required=False,
        allow_null=True,
        help_text="For an https:// address. Absent: keep those saved (dropped when the "
        "address changes); null: forget them.",
    )


class GitSkippedOutput(serializers.Serializer):
    path = serializers.CharField()
    reason = serializers.CharField()


class GitSyncOutput(serializers.Serializer):
    id = serializers.IntegerField()
    space = serializers.CharField(source="space_id")
    direction = serializers.ChoiceField(choices=GitSync.Direction.choices)
    status = serializers.ChoiceField(choices=GitSync.Status.choices)
    trigger = serializers.CharField(help_text="manual, or revision (sync every new revision)")
    url = serializers.CharField()
    branch = serializers.CharField()
    revision = serializers.CharField(
        source="revision_id",
        allow_null=True,
        help_text="Export: the revision written. Import: the revision made (null when the "
        "branch held the space's pages already).",
    )
    commit = serializers.CharField(help_text="The commit written (export) or read (import).")
    reason = serializers.CharField(help_text="Why it failed (empty otherwise).")
    skipped = GitSkippedOutput(many=True, help_text="Import: the Markdown files left out.")
    merged = serializers.BooleanField(
        help_text="The branch and the space had both changed since the last sync: merged."
    )
    conflicts = serializers.ListField(
        child=serializers.DictField(),
        help_text="The pages both changed where the changes overlap, each {page, hunks: "
        "[{field, base, theirs, mine}]}: nothing was written.",
    )
    changeRequest = serializers.IntegerField(
        source="change_request.number",
        allow_null=True,
        default=None,
        help_text="A conflict's change request, holding the branch's side: its number.",
    )
    requestedBy = serializers.CharField(
        source="requested_by.username", allow_null=True, default=None
    )
    createdAt = serializers.DateTimeField(source="created_at")
    startedAt = serializers.DateTimeField(source="started_at", allow_null=True)
    finishedAt = serializers.DateTimeField(source="finished_at", allow_null=True)


ConflictResponse = OpenApiResponse(
    inline_serializer(
        "GitSyncConflictResponse",
        {
            "type": serializers.CharField(help_text="client_error"),
            "errors": inline_serializer(
                "GitSyncConflictDetail",
                {
                    "code": serializers.CharField(help_text="not_connected"),
                    "detail": serializers.CharField(),
                    "attr": serializers.CharField(allow_null=True),
                },
                many=True,
            ),
        },
    ),
    description="The space is not connected to a Git repository.",
)


class NotConnectedError(exceptions.APIException):
    status_code = status.HTTP_409_CONFLICT
    default_code = "not_connected"


@service_errors(
    "url",
    "branch",
    "credentials",
    "credentials.username",
    "credentials.password",
    methods=["put"],
)
class GitConnectionApi(SpaceGitApi):
    """The space's Git connection (404 when it has none). PUT connects the space or changes
    its connection; DELETE disconnects it (its syncs' history stays)."""

    @extend_schema(summary="Get a space's Git connection", responses=GitConnectionOutput)
    def get(self, request, space_id):
        connection = selectors.git_connection_of(self.space(request, space_id))
        if connection is None:
            raise Http404
        return Response(GitConnectionOutput(connection).data)

    @extend_schema(
        summary="Connect a space to a Git repository, or change its connection",
        request=GitConnectionInput,
        responses=GitConnectionOutput,
        examples=[
            OpenApiExample(
                "Over https, with an access token",
                value={
                    "url": "https://git.example.com/acme/docs.git",
                    "branch": "main",
                    "syncOnRevision": True,
                    "credentials": {"username": "acme-bot", "password": "an-access-token"},
                },
                request_only=True,
            ),
            OpenApiExample(
                "Over ssh",
                value={"url": "ssh://git@git.example.com/acme/docs.git", "branch": "docs"},
                request_only=True,
            ),
        ],
    )
    def put(self, request, space_id):
        space = self.space(request, space_id)
        data = GitConnectionInput(data=request.data)
        data.is_valid(raise_exception=True)
        fields = data.validated_data
        credentials = (fields["credentials"] or {}) if "credentials" in fields else None
        connection = services.git_connection_set(
            space=space,
            url=fields["url"],
            branch=fields["branch"],
            sync_on_revision=fields["syncOnRevision"],
            credentials=credentials,
            user=request.user,
        )
        return Response(GitConnectionOutput(connection).data)

    @extend_schema(summary="Disconnect a space from its Git repository", responses={204: None})
    def delete(self, request, space_id):
        space = self.space(request, space_id)
        if not services.git_connection_remove(space=space):
            raise Http404
        return Response(status=status.HTTP_204_NO_CONTENT)


class GitSyncRequestApi(SpaceGitApi):
    """Queue "Sync now" (write the space's current revision to its branch); 202 with the
    sync, whose ``status`` says how it went (``GET .../git/syncs/{id}/``). A sync of the same
    direction still waiting to start is answered instead of queueing another."""

    direction = GitSync.Direction.EXPORT

    @extend_schema(
        summary="Sync now: write the space's current revision to its branch",
        request=None,
        responses={202: GitSyncOutput, 409: ConflictResponse},
    )
    def post(self, request, space_id):
        space = self.space(request, space_id)
        try:
            sync = services.git_sync_request(
                space=space, direction=self.direction, requested_by=request.user
            )
        except services.NotConnected as refusal:
            raise NotConnectedError(str(refusal)) from None
        return Response(GitSyncOutput(sync).data, status=status.HTTP_202_ACCEPTED)


@extend_schema_view(
    post=extend_schema(summary="Import: a new revision from the branch's Markdown files")
)
class GitImportRequestApi(GitSyncRequestApi):
    """Queue "Import" (a new revision from the branch's Markdown files, when they differ
    from the space's pages); 202 with the sync."""

    direction = GitSync.Direction.IMPORT


@extend_schema_view(get=extend_schema(summary="List a space's Git syncs"))
class GitSyncListApi(SpaceGitApi, generics.ListAPIView):
    """The space's syncs, newest first."""

    queryset = GitSync.objects.none()
    serializer_class = GitSyncOutput

    def get_queryset(self):
        return selectors.git_syncs_of(self.space(self.request, self.kwargs["space_id"]))


class GitSyncDetailApi(SpaceGitApi):
    """One of the space's syncs."""

    @extend_schema(summary="Get one of a space's Git syncs", responses=GitSyncOutput)
    def get(self, request, space_id, sync_id):
        space = self.space(request, space_id)
        sync = get_object_or_404(selectors.git_syncs_of(space), pk=sync_id)
        return Response(GitSyncOutput(sync).data)
