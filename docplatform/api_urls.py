"""The host platform's REST API routes (``/api/v1/``). Plug-in apps add their own routes
(``integrations.api.urls``, ``webhooks.api_urls``) beside these in the root URLconf; the path
converters they share are registered in ``DocplatformConfig.ready``."""

from django.urls import path

from .api import event_types, organizations, tokens
from .audit import api as audit_api
from .conversations import api as conversations_api
from .documents.api import page_restore, pages, revisions, spaces
from .documents.changes import api as changes_api
from .documents.comments import api as comments_api
from .gitsync import api as git_api
from .openapi import api as openapi_api
from .sites import adaptive_api as adaptive
from .sites import api as sites
from .teams import api as teams_api

urlpatterns = [
    path("me/", organizations.MeApi.as_view(), name="me"),
    path("me/tokens/", tokens.MyTokensApi.as_view(), name="my-tokens"),
    path("me/tokens/<tokenid:token_id>/", tokens.MyTokenApi.as_view(), name="my-token"),
    path("orgs/", organizations.OrganizationListApi.as_view(), name="organizations"),
    path("orgs/<orgref:org>/", organizations.OrganizationDetailApi.as_view(), name="organization"),
    path("orgs/<orgref:org>/spaces/", spaces.SpaceListApi.as_view(), name="organization-spaces"),
    path("orgs/<orgref:org>/sites/", sites.SiteListApi.as_view(), name="organization-sites"),
    path("orgs/<orgref:org>/events/", sites.EventListApi.as_view(), name="organization-events"),
    path("orgs/<orgref:org>/members/", teams_api.MembersApi.as_view(), name="members"),
    path(
        "orgs/<orgref:org>/members/<username:username>/",
        teams_api.MemberApi.as_view(),
        name="member",
    ),
    path(
        "orgs/<orgref:org>/invitations/",
        teams_api.InvitationsApi.as_view(),
        name="invitations",
    ),
    path(
        "orgs/<orgref:org>/invitations/<id:invitation_id>/",
        teams_api.InvitationApi.as_view(),
        name="invitation",
    ),
    path(
        "invitations/accept/",
        teams_api.InvitationAcceptApi.as_view(),
        name="invitation-accept",
    ),
    path("orgs/<orgref:org>/audit-log/", audit_api.AuditLogApi.as_view(), name="audit-log"),
    path(
        "orgs/<orgref:org>/conversations/",
        conversations_api.ConversationListApi.as_view(),
        name="conversations",
    ),
    path(
        "orgs/<orgref:org>/conversations/<id:conversation_id>/",
        conversations_api.ConversationDetailApi.as_view(),
        name="conversation",
    ),
    path("orgs/<orgref:org>/openapi/", openapi_api.OpenApiDocumentsApi.as_view(), name="openapi"),
    path(
        "orgs/<orgref:org>/openapi/<name:name>/",
        openapi_api.OpenApiDocumentApi.as_view(),
        name="openapi-document",
    ),
    path(
        "orgs/<orgref:org>/openapi/<name:name>/versions/<str:version>/",
        openapi_api.OpenApiVersionApi.as_view(),
        name="openapi-version",
    ),
    path("event-types/", event_types.EventTypeListApi.as_view(), name="event-types"),
    path(
        "event-types/<str:event_type>/",
        event_types.EventTypeDetailApi.as_view(),
        name="event-type",
    ),
    path("spaces/<id:space_id>/", spaces.SpaceDetailApi.as_view(), name="space"),
    path(
        "spaces/<id:space_id>/revisions/",
        revisions.SpaceRevisionsApi.as_view(),
        name="space-revisions",
    ),
    path("spaces/<id:space_id>/pages/", revisions.SpacePagesApi.as_view(), name="space-pages"),
    path(
        "spaces/<id:space_id>/pages/restore/",
        page_restore.SpacePageRestoreApi.as_view(),
        name="space-page-restore",
    ),
    # After the routes above: a page path never ends with "/" (``content.page_path_problem``).
    path(
        "spaces/<id:space_id>/pages/<path:page_path>",
        pages.SpacePageApi.as_view(),
        name="space-page",
    ),
    path(
        "spaces/<id:space_id>/comments/",
        comments_api.CommentsApi.as_view(),
        name="space-comments",
    ),
    path(
        "spaces/<id:space_id>/comments/<id:comment_id>/",
        comments_api.CommentApi.as_view(),
        name="space-comment",
    ),
    path(
        "spaces/<id:space_id>/change-requests/",
        changes_api.ChangeRequestListApi.as_view(),
        name="change-requests",
    ),
    path(
        "spaces/<id:space_id>/change-requests/<int:number>/",
        changes_api.ChangeRequestDetailApi.as_view(),
        name="change-request",
    ),
    path(
        "spaces/<id:space_id>/change-requests/<int:number>/pages/",
        changes_api.ChangeRequestPagesApi.as_view(),
        name="change-request-pages",
    ),
    path(
        "spaces/<id:space_id>/change-requests/<int:number>/reviews/",
        changes_api.ChangeRequestReviewsApi.as_view(),
        name="change-request-reviews",
    ),
    path(
        "spaces/<id:space_id>/change-requests/<int:number>/merge/",
        changes_api.ChangeRequestMergeApi.as_view(),
        name="change-request-merge",
    ),
    path(
        "spaces/<id:space_id>/change-requests/<int:number>/comments/",
        comments_api.ChangeRequestCommentsApi.as_view(),
        name="change-request-comments",
    ),
    path(
        "spaces/<id:space_id>/change-requests/<int:number>/comments/<id:comment_id>/",
        comments_api.ChangeRequestCommentApi.as_view(),
        name="change-request-comment",
    ),
    path("spaces/<id:space_id>/git/", git_api.GitConnectionApi.as_view(), name="space-git"),
    path(
        "spaces/<id:space_id>/git/sync/",
        git_api.GitSyncRequestApi.as_view(),
        name="space-git-sync",
    ),
    path(
        "spaces/<id:space_id>/git/import/",
        git_api.GitImportRequestApi.as_view(),
        name="space-git-import",
    ),
    path(
        "spaces/<id:space_id>/git/syncs/",
        git_api.GitSyncListApi.as_view(),
        name="space-git-syncs",
    ),
    path(
        "spaces/<id:space_id>/git/syncs/<tokenid:sync_id>/",  # a row id: at most 18 digits
        git_api.GitSyncDetailApi.as_view(),
        name="space-git-sync-detail",
    ),
    path("spaces/<id:space_id>/views/", spaces.SpaceViewApi.as_view(), name="space-views"),
    path(
        "revisions/<id:revision_id>/pages/",
        revisions.RevisionPagesApi.as_view(),
        name="revision-pages",
    ),
    path("sites/<id:site_id>/", sites.SiteDetailApi.as_view(), name="site"),
    path(
        "sites/<id:site_id>/adaptive/",
        adaptive.SiteAdaptiveApi.as_view(),
        name="site-adaptive",
    ),
    path(
        "beacon/sites/<id:site_id>/views/",
        sites.BeaconSiteViewApi.as_view(),
        name="beacon-site-views",
    ),
    path(
        "beacon/sites/<id:site_id>/feedback/",
        sites.BeaconPageFeedbackApi.as_view(),
        name="beacon-page-feedback",
    ),
]
