"""Who a site's visitor is, for the site's pages and the beacon alike."""

from ..api.visitors import VISITOR_COOKIE, visitor_from
from ..documents.services import reader_identity
from ..events import Visitor


def site_visitor(request) -> tuple[Visitor, str]:
    """The visitor making ``request`` (``api.visitors``: never anyone signed in) and who they
    are for the view limit and the one rating per page: the anonymous id their browser sent
    back, else their address and user agent (a client that keeps no cookie would otherwise
    be someone new at every request)."""
    visitor = visitor_from(request)
    known = request.COOKIES.get(VISITOR_COOKIE) == visitor.anonymous_id
    return visitor, reader_identity(visitor, known_cookie=known)
