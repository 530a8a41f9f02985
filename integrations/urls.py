"""The URLconf of the integrations host (``INTEGRATIONS_URL``, see ``integrations.middleware``):
the installation and integration public endpoints, and where a site's visitors sign in
through an installation (``views.visitor_authentication``); nothing else."""

from django.urls import re_path

from . import views

urlpatterns = [
    re_path(
        r"^visitor-auth/(?P<installation_id>[A-Za-z0-9]{1,32})$",
        views.visitor_authentication,
        name="visitor-authentication",
    ),
    re_path(
        r"^installations/(?P<installation_id>[A-Za-z0-9]{1,32})(?P<path>/.*)?$",
        views.installation_endpoint,
        name="installation-endpoint",
    ),
    re_path(
        r"^integrations/(?P<name>[a-z0-9]+(?:-[a-z0-9]+)*)(?P<path>/.*)?$",
        views.integration_endpoint,
        name="integration-endpoint",
    ),
]

handler404 = "integrations.views.not_found"
handler500 = "integrations.views.server_error"
