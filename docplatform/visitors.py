"""The visitor behind a request, as the beacon and space views record it (DESIGN.md,
"``site_view`` data"): user agent, client address, an anonymous id kept in a first-party
cookie, and the site's own cookies, never the platform's session or CSRF cookies."""

import dataclasses
import re
import secrets

from django.conf import settings

from .client_address import client_ip
from .events import Visitor
from .principals import is_machine
from .visits import reader_identity

VISITOR_COOKIE = "dp_visitor"
VISITOR_COOKIE_MAX_AGE = 365 * 24 * 60 * 60
ANONYMOUS_ID = re.compile(r"[A-Za-z0-9_-]{16,64}")
MAX_USER_AGENT_LENGTH = 1000


def platform_cookie_names() -> set[str]:
    return {
        "sessionid",
        "csrftoken",
        settings.SESSION_COOKIE_NAME,
        settings.CSRF_COOKIE_NAME,
        VISITOR_COOKIE,
    }


def site_cookies(request) -> dict[str, str]:
    """The request's cookies minus the platform's own."""
    platform = platform_cookie_names()
    return {
        name: value
        for name, value in request.COOKIES.items()
        if name not in platform and "\x00" not in name + value
    }


def visitor_from(request) -> Visitor:
    """The visitor making ``request``; a new anonymous id when the cookie holds none."""
    anonymous_id = request.COOKIES.get(VISITOR_COOKIE, "")
    if not ANONYMOUS_ID.fullmatch(anonymous_id):
        anonymous_id = secrets.token_urlsafe(16)
    user_agent = request.META.get("HTTP_USER_AGENT", "").replace("\x00", "")
    return Visitor(
        anonymous_id=anonymous_id,
        user_agent=user_agent[:MAX_USER_AGENT_LENGTH],
        ip=client_ip(request),
        cookies=site_cookies(request),
    )


def space_reader(request) -> tuple[Visitor, str]:
    """The visitor reading a space (its reader, or ``POST /api/v1/spaces/{id}/views/``) and
    who they are for the view rule (``visits.reader_identity``): the person signed in (their
    id is the event's ``visitor.userId``), else the anonymous id their browser sent back, else
    their address and user agent."""
    visitor = visitor_from(request)
    user = getattr(request, "user", None)
    if user is not None and user.is_authenticated and not is_machine(user):
        visitor = dataclasses.replace(visitor, user_id=str(user.pk))
    known = request.COOKIES.get(VISITOR_COOKIE) == visitor.anonymous_id
    return visitor, reader_identity(visitor, known_cookie=known)


def remember_visitor(response, request, visitor: Visitor) -> None:
    """Set the anonymous-id cookie when the request did not carry this id."""
    if request.COOKIES.get(VISITOR_COOKIE) != visitor.anonymous_id:
        response.set_cookie(
            VISITOR_COOKIE,
            visitor.anonymous_id,
            max_age=VISITOR_COOKIE_MAX_AGE,
            httponly=True,
            samesite="Lax",
            secure=request.is_secure(),
        )
