"""The door of an authenticated site (``SiteView`` asks it before anything of the site is
read): a visitor coming back with a token gets a session, or a 401 page saying what is wrong
with it; a visitor with a session goes on; any other is sent to sign in (a page), or refused
with 401 (search, what visitors send, JSON). A site whose sign-in installation cannot sign
anyone in now (gone, paused, its scope withdrawn) answers 503: it never turns public."""

from urllib.parse import urlencode

from django.conf import settings
from django.http import HttpResponse, JsonResponse
from django.shortcuts import redirect, render

from ..models import Site
from .addresses import site_url
from .visitor_auth import visitor_auth
from .visitor_sessions import (
    TOKEN_PARAMETER,
    VisitorTokenRefused,
    session_claims,
    session_cookie_set,
    session_start,
    token_claims,
)


def wants_json(request) -> bool:
    return request.content_type == "application/json" or "application/json" in request.headers.get(
        "Accept", ""
    )


def refusal(request, site: Site, *, sends_to_sign_in: bool) -> HttpResponse | None:
    """None when the visitor may go on; else the answer that stops them. ``sends_to_sign_in``:
    a page a visitor asks for by its address (a sign-in brings them back to it)."""
    if not site.authenticated:
        return None
    token = request.GET.get(TOKEN_PARAMETER)
    if token is not None:
        return _token_taken(request, site, token)
    if session_claims(request, site) is not None:
        return None
    reading = request.method in ("GET", "HEAD")
    location = _without_token(request) if reading else site_url(site)
    sign_in = visitor_auth().sign_in_url(site, location)
    if sign_in is None:
        return _refused(
            request,
            site,
            "Signing in is unavailable",
            "This site lets in only signed-in visitors, and signing in does not work at the "
            "moment. Try again later.",
            status=503,
        )
    if sends_to_sign_in and reading and not wants_json(request):
        return redirect(sign_in)
    message = "This site lets in only signed-in visitors: sign in to read it."
    return _refused(request, site, "Sign in first", message, sign_in=sign_in)


def _token_taken(request, site: Site, token: str) -> HttpResponse:
    """Start a session from the token and go to the same address without it; or 401."""
    back = _without_token(request)
    try:
        claims = token_claims(site, token)
    except VisitorTokenRefused as refused:
        sign_in = visitor_auth().sign_in_url(site, back)
        message = f"You could not be signed in: {refused}."
        return _refused(
            request, site, "Not signed in", message, sign_in=sign_in, field=TOKEN_PARAMETER
        )
    response = redirect(back)
    session_cookie_set(response, site, session_start(site, claims))
    return response


def _without_token(request) -> str:
    """The address the visitor asked for, on ``SITES_URL``, without the token."""
    query = [(k, v) for k, v in request.GET.lists() if k != TOKEN_PARAMETER]
    kept = urlencode([(k, value) for k, values in query for value in values])
    return settings.SITES_URL + request.path + (f"?{kept}" if kept else "")


def _refused(
    request,
    site: Site,
    title: str,
    message: str,
    *,
    status: int = 401,
    sign_in: str | None = None,
    field: str = "visitor",
) -> HttpResponse:
    if wants_json(request):
        return JsonResponse({"errors": {field: [message]}}, status=status)
    context = {"site": site, "title": title, "message": message, "sign_in": sign_in}
    return render(request, "sites/sign_in.html", context, status=status)
