"""The host's organization pages (``/orgs/...``): New organization, an organization's
settings and a new space in it (its Sites page: ``sites.organization_urls``). ``new`` is a
reserved subdomain (``organizations.services.RESERVED_SUBDOMAINS``), so ``new/`` never
shadows an organization."""

from django.urls import path

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
]
