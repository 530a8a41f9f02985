"""The documentation product's addresses (DESIGN.md, "The documentation product"): the reader
is ``/s/<space id>/`` and ``/s/<space id>/<page path>``, the editor appends ``/edit``, the
history is ``/s/<space id>/history``, the settings ``/s/<space id>/settings`` (its Git part
posts to ``settings/git...``, routed by ``gitsync.urls``; deleting the space is
``settings/delete``), its change requests
``/s/<space id>/~cr/`` (one is ``~cr/<number>/``, its pages' editor
``~cr/<number>/<page path>/edit``). Page paths never start with ``history``, ``settings``,
``new``, ``-`` or ``~`` (a part starts with a letter or digit) and hold no part named ``edit``
(``content.page_path_problem``), so these never shadow a page."""

from django.urls import path

from ..spaces import views as space_views
from . import editor_views, history_views, views
from .changes import views as change_views
from .comments import views as comment_views

app_name = "docs"

urlpatterns = [
    path("", views.SpaceListView.as_view(), name="spaces"),
    path("search", views.SearchView.as_view(), name="search"),
    path("<id:space_id>/", views.ReaderView.as_view(), name="space"),
    path("<id:space_id>/history", history_views.HistoryView.as_view(), name="history"),
    path(
        "<id:space_id>/history/<id:revision_id>/",
        history_views.RevisionView.as_view(),
        name="revision",
    ),
    path(
        "<id:space_id>/history/<id:revision_id>/diff",
        history_views.RevisionDiffView.as_view(),
        name="revision-diff",
    ),
    path(
        "<id:space_id>/history/<id:revision_id>/restore",
        history_views.RevisionRestoreView.as_view(),
        name="revision-restore",
    ),
    path(
        "<id:space_id>/history/<id:revision_id>/restore-page",
        history_views.PageRestoreView.as_view(),
        name="page-restore",
    ),
    path(
        "<id:space_id>/history/<id:revision_id>/<path:page_path>",
        history_views.RevisionView.as_view(),
        name="revision-page",
    ),
    path("<id:space_id>/settings", space_views.SpaceSettingsView.as_view(), name="settings"),
    path(
        "<id:space_id>/settings/delete",
        space_views.SpaceDeleteView.as_view(),
        name="space-delete",
    ),
    path("<id:space_id>/~cr/", change_views.ChangeRequestsView.as_view(), name="change-requests"),
    path(
        "<id:space_id>/~cr/<int:number>/",
        change_views.ChangeRequestView.as_view(),
        name="change-request",
    ),
    *(
        path(
            f"<id:space_id>/~cr/<int:number>/-/{action}",
            change_views.ChangeRequestActionView.as_view(action=action),
            name=f"change-request-{action}",
        )
        for action in ("review", "reviewers", "status", "merge", "update")
    ),
    path(
        "<id:space_id>/~cr/<int:number>/-/comments",
        comment_views.CommentCreateView.as_view(),
        name="change-request-comment-create",
    ),
    path(
        "<id:space_id>/~cr/<int:number>/-/comments/<id:comment_id>/resolve",
        comment_views.CommentResolveView.as_view(),
        name="change-request-comment-resolve",
    ),
    path(
        "<id:space_id>/~cr/<int:number>/-/comments/<id:comment_id>/delete",
        comment_views.CommentDeleteView.as_view(),
        name="change-request-comment-delete",
    ),
    path(
        "<id:space_id>/~cr/<int:number>/<path:page_path>/edit",
        change_views.ChangeRequestPageEditView.as_view(),
        name="change-request-edit",
    ),
    path("<id:space_id>/new", editor_views.PageNewView.as_view(), name="page-new"),
    path("<id:space_id>/-/preview", editor_views.PagePreviewView.as_view(), name="preview"),
    path("<id:space_id>/-/delete", editor_views.PageDeleteView.as_view(), name="page-delete"),
    path("<id:space_id>/-/presence", editor_views.PagePresenceView.as_view(), name="presence"),
    path("<id:space_id>/-/move", editor_views.PageMoveView.as_view(), name="page-move"),
    path("<id:space_id>/-/blocks", views.BlockActionView.as_view(), name="block-action"),
    path(
        "<id:space_id>/-/comments",
        comment_views.CommentCreateView.as_view(),
        name="comment-create",
    ),
    path(
        "<id:space_id>/-/comments/<id:comment_id>/resolve",
        comment_views.CommentResolveView.as_view(),
        name="comment-resolve",
    ),
    path(
        "<id:space_id>/-/comments/<id:comment_id>/delete",
        comment_views.CommentDeleteView.as_view(),
        name="comment-delete",
    ),
    path("<id:space_id>/<path:page_path>/edit", editor_views.PageEditView.as_view(), name="edit"),
    path("<id:space_id>/<path:page_path>", views.ReaderView.as_view(), name="page"),
]
