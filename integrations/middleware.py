"""The integrations origin: requests to ``INTEGRATIONS_URL``'s host (DESIGN.md, "Trust
boundaries" 3).

``IntegrationsOriginMiddleware`` comes first in ``MIDDLEWARE``. A request whose host is the
integrations host never reaches the rest of the chain: no session, CSRF, authentication or
messages middleware reads or sets anything for it, and only ``integrations.urls`` (the
installation and integration public endpoints) resolves there; anything else answers 404.
Requests to any other host go on to the platform as before, where those paths do not exist.
The host is compared without its port: browsers keep cookies per host, whatever the port.
"""

from urllib.parse import urlsplit

from django.conf import settings
from django.core.handlers.exception import convert_exception_to_response
from django.http.request import split_domain_port
from django.middleware.security import SecurityMiddleware
from django.urls import resolve, set_urlconf

URLCONF = "integrations.urls"


def integrations_host() -> str:
    host = urlsplit(settings.INTEGRATIONS_URL).hostname or ""
    return f"[{host}]" if ":" in host else host.rstrip(".").lower()


def is_integrations_request(request) -> bool:
    """Whether the request was sent to the integrations host (``get_host`` checks
    ALLOWED_HOSTS, as the platform's own middleware would)."""
    domain, _port = split_domain_port(request.get_host())
    return domain == integrations_host()


class IntegrationsOriginMiddleware:
    def __init__(self, get_response):
        self.get_response = get_response
        # HTTPS redirect and HSTS apply to this origin too; nothing else of the platform's.
        self.serve_endpoint = convert_exception_to_response(
            SecurityMiddleware(convert_exception_to_response(self.endpoint))
        )

    def __call__(self, request):
        if not is_integrations_request(request):
            return self.get_response(request)
        # Error pages (404, 500) come from the integrations URLconf's handlers.
        request.urlconf = URLCONF
        set_urlconf(URLCONF)
        return self.serve_endpoint(request)

    @staticmethod
    def endpoint(request):
        match = resolve(request.path_info, urlconf=URLCONF)  # Resolver404: the 404 handler
        request.resolver_match = match
        return match.func(request, *match.args, **match.kwargs)
