"""The root URLconf: it only includes each app's routes."""

from django.contrib import admin
from django.urls import include, path
from django.views.generic import RedirectView

from .observability.views import metrics

# The integrations' routes first: the component API, the busiest, is matched before the
# platform's 46 routes are tried (no two of the apps' routes match one path).
api_v1 = [
    path("", include("integrations.api.urls")),
    path("", include("docplatform.api_urls")),
    path("", include("webhooks.api_urls")),
]

urlpatterns = [
    # The API first: Django tries the routes in order, and no other route matches under api/v1/.
    path("api/v1/", include((api_v1, "api"))),
    path("", RedirectView.as_view(url="/marketplace/", permanent=False)),
    path("admin/", admin.site.urls),
    path("marketplace/", include("marketplace.urls")),
    # Git sync's routes first: the reader's catch-all page path would take settings/git.
    path("s/", include("docplatform.gitsync.urls")),
    path("s/", include("docplatform.documents.urls")),
    path("", include("docplatform.teams.urls")),  # /orgs/<subdomain>/members/, /invitations/
    path("orgs/", include("docplatform.audit.urls")),
    path("orgs/", include("docplatform.conversations.urls")),
    path("orgs/", include("docplatform.organizations.urls")),
    path("orgs/", include("docplatform.sites.organization_urls")),
    path("api/", include("docplatform.api_docs_urls")),
    path("metrics", metrics, name="metrics"),
]

handler404 = "docplatform.api.errors.not_found"
handler500 = "docplatform.api.errors.server_error"
