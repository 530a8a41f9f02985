"""The Conversations page: ``/orgs/<subdomain>/conversations/``."""

from django.urls import path

from . import views

app_name = "conversations"

urlpatterns = [
    path(
        "<slug:organization>/conversations/",
        views.ConversationsPage.as_view(),
        name="conversations",
    ),
]
