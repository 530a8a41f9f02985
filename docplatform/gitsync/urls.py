"""The Git part of a space's settings page posts here (``/s/<space id>/settings/git...``):
connect, disconnect, "Sync now" and "Import"."""

from django.urls import path

from . import views
from .models import GitSync

app_name = "git"

urlpatterns = [
    path("<id:space_id>/settings/git", views.GitConnectView.as_view(), name="connect"),
    path(
        "<id:space_id>/settings/git/disconnect",
        views.GitDisconnectView.as_view(),
        name="disconnect",
    ),
    path(
        "<id:space_id>/settings/git/sync",
        views.GitSyncRequestView.as_view(),
        name="sync",
    ),
    path(
        "<id:space_id>/settings/git/import",
        views.GitSyncRequestView.as_view(direction=GitSync.Direction.IMPORT),
        name="import",
    ),
]
