"""An organization's Sites page (``/orgs/<organization>/sites/...``): its sites, a new one,
one's settings, publishing and deleting it."""

from django.urls import path

from . import organization_views

app_name = "site-admin"

urlpatterns = [
    path("<slug:organization>/sites/", organization_views.SiteListPage.as_view(), name="list"),
    path("<slug:organization>/sites/new/", organization_views.SiteNewPage.as_view(), name="new"),
    path(
        "<slug:organization>/sites/<id:site_id>/",
        organization_views.SiteEditPage.as_view(),
        name="edit",
    ),
    path(
        "<slug:organization>/sites/<id:site_id>/publish/",
        organization_views.SitePublishPage.as_view(),
        name="publish",
    ),
    path(
        "<slug:organization>/sites/<id:site_id>/delete/",
        organization_views.SiteDeletePage.as_view(),
        name="delete",
    ),
]
