"""The pages of an organization's people and of invitations' links (``teams.views``),
included at the root: ``/orgs/<subdomain>/members/...`` and ``/invitations/<token>/``."""

from django.urls import path

from . import views

app_name = "teams"

urlpatterns = [
    path("invitations/<slug:token>/", views.InvitationPage.as_view(), name="invitation"),
    path("orgs/<slug:organization>/members/", views.MembersPage.as_view(), name="members"),
    path(
        "orgs/<slug:organization>/members/invite/",
        views.InvitePage.as_view(),
        name="invite",
    ),
    path(
        "orgs/<slug:organization>/members/invitations/<id:invitation_id>/revoke/",
        views.InvitationRevokePage.as_view(),
        name="invitation-revoke",
    ),
    path(
        "orgs/<slug:organization>/members/<username:username>/role/",
        views.MemberRolePage.as_view(),
        name="member-role",
    ),
    path(
        "orgs/<slug:organization>/members/<username:username>/remove/",
        views.MemberRemovePage.as_view(),
        name="member-remove",
    ),
]
