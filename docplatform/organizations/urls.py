"""The host's organization pages (``/orgs/...``): New organization, an organization's
settings, a new space in it, and its Sites page. ``new`` is a reserved subdomain
(``organizations.services.RESERVED_SUBDOMAINS``), so ``new/`` never shadows an organization."""

from django.urls import path

from ..sites import organization_views as site_views
from . import views

app_name = "orgs"

urlpatterns = [
    path("new/", views.OrganizationNewPage.as_view(), name="new"),
    path(
        "<slug:organization>/settings/",
        views.OrganizationSettingsPage.as_view(),
        name="settings",
    ),
    path("<slug:organization>/spaces/new/", views.SpaceNewPage.as_view(), name="space-new"),
    path("<slug:organization>/sites/", site_views.SiteListPage.as_view(), name="sites"),
    path("<slug:organization>/sites/new/", site_views.SiteNewPage.as_view(), name="site-new"),
    path(
        "<slug:organization>/sites/<id:site_id>/",
        site_views.SiteEditPage.as_view(),
        name="site",
    ),
    path(
        "<slug:organization>/sites/<id:site_id>/publish/",
        site_views.SitePublishPage.as_view(),
        name="site-publish",
    ),
    path(
        "<slug:organization>/sites/<id:site_id>/delete/",
        site_views.SiteDeletePage.as_view(),
        name="site-delete",
    ),
]
