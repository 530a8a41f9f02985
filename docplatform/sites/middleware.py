"""The published sites' origin: requests to ``SITES_URL``'s host (DESIGN.md, "The documentation
product").

``SitesOriginMiddleware`` comes right after the integrations origin's in ``MIDDLEWARE``. A
request whose host is the sites host never reaches the rest of the chain: no session, CSRF,
authentication or messages middleware reads or sets anything for it (a member signed in on the
platform is nobody here: ``request.user`` is anonymous whatever cookie came), and only
``docplatform.sites.urls`` resolves there; anything else answers the site's 404. The only
cookie set there is the site's own anonymous visitor cookie. The host is compared without its
port: browsers keep cookies per host, whatever the port.

Every answer of that origin carries its own Content-Security-Policy (scripts and styles from
its own static files, no inline script; images from https addresses too, as pages link them;
no plugins; forms and fetches to itself only) and may not be framed.
"""

from urllib.parse import urlsplit

from django.conf import settings
from django.contrib.auth.models import AnonymousUser
from django.core.handlers.exception import convert_exception_to_response
from django.http.request import split_domain_port
from django.middleware.common import CommonMiddleware
from django.middleware.security import SecurityMiddleware
from django.urls import resolve, set_urlconf
from whitenoise.middleware import WhiteNoiseMiddleware

URLCONF = "docplatform.sites.urls"

CONTENT_SECURITY_POLICY = "; ".join(
    [
        "default-src 'self'",
        "script-src 'self'",
        "style-src 'self'",
        "img-src 'self' https:",
        "connect-src 'self'",
        "form-action 'self'",
        "object-src 'none'",
        "base-uri 'none'",
        "frame-ancestors 'none'",
    ]
)


def sites_host() -> str:
    host = urlsplit(settings.SITES_URL).hostname or ""
    return f"[{host}]" if ":" in host else host.rstrip(".").lower()


def is_sites_request(request) -> bool:
    """Whether the request was sent to the sites host (``get_host`` checks ALLOWED_HOSTS, as
    the platform's own middleware would)."""
    domain, _port = split_domain_port(request.get_host())
    return domain == sites_host()


class SitesOriginMiddleware:
    def __init__(self, get_response):
        self.get_response = get_response
        # HTTPS redirect and HSTS apply to this origin too, static files are served here (the
        # pages' own scripts and styles), a missing slash is added; nothing else of the
        # platform's chain runs.
        self.serve_site = convert_exception_to_response(
            SecurityMiddleware(
                convert_exception_to_response(
                    WhiteNoiseMiddleware(
                        convert_exception_to_response(
                            CommonMiddleware(convert_exception_to_response(self.page))
                        )
                    )
                )
            )
        )

    def __call__(self, request):
        if not is_sites_request(request):
            return self.get_response(request)
        # Error pages (404, 500) come from the sites URLconf's handlers.
        request.urlconf = URLCONF
        set_urlconf(URLCONF)
        request.user = AnonymousUser()
        response = self.serve_site(request)
        response["Content-Security-Policy"] = CONTENT_SECURITY_POLICY
        response["X-Frame-Options"] = "DENY"
        return response

    @staticmethod
    def page(request):
        match = resolve(request.path_info, urlconf=URLCONF)  # Resolver404: the 404 handler
        request.resolver_match = match
        return match.func(request, *match.args, **match.kwargs)
