"""Who a site's visitor is, for the site's pages and the beacon alike."""

from dataclasses import replace

from ..events import Visitor
from ..visitors import VISITOR_COOKIE, visitor_from
from ..visits import reader_identity
from .visitor_sessions import visitor_claims


def site_visitor(request, site=None) -> tuple[Visitor, str]:
    """The visitor making ``request`` (``docplatform.visitors``: never anyone signed in) and who
    they are for the view limit and the one rating per page: the anonymous id their browser sent
    back, else their address and user agent (a client that keeps no cookie would otherwise
    be someone new at every request). On an authenticated ``site`` (its own pages: the
    beacon names none), the visitor carries their session's claims."""
    visitor = visitor_from(request)
    if site is not None and site.authenticated:
        visitor = replace(visitor, claims=visitor_claims(request, site))
    known = request.COOKIES.get(VISITOR_COOKIE) == visitor.anonymous_id
    return visitor, reader_identity(visitor, known_cookie=known)
