"""A task tracker for the OAuth tests: the platform's URLs plus a real OAuth 2 authorization
server (django-oauth-toolkit) under ``/o/``, a projects API it protects, and a token endpoint
that always fails. Selected with ``@pytest.mark.urls("tests.integrations.oauth_provider")``."""

from django.http import HttpResponse, JsonResponse
from django.urls import include, path
from django.views.decorators.csrf import csrf_exempt
from oauth2_provider.decorators import protected_resource

from docplatform.urls import handler404, handler500
from docplatform.urls import urlpatterns as platform_urlpatterns

__all__ = ["handler404", "handler500", "urlpatterns"]


@protected_resource(scopes=["projects:read"])
def projects(request):
    """The projects of the token's user: ``[{"id", "name"}]``."""
    owner = request.resource_owner.get_username()
    return JsonResponse(
        [{"id": "docs", "name": f"Docs ({owner})"}, {"id": "web", "name": "Website"}], safe=False
    )


@csrf_exempt
def broken_token_endpoint(request):
    return HttpResponse("token service down", status=500, content_type="text/plain")


urlpatterns = [
    path("o/", include("oauth2_provider.urls", namespace="oauth2_provider")),
    path("tracker/api/projects", projects),
    path("tracker/broken-token", broken_token_endpoint),
    *platform_urlpatterns,
]
