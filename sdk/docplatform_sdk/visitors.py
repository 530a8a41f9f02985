"""Signing a site's visitor in: the token an integration granted ``site:visitor:auth`` hands
the site once its visitor has signed in (README, "Visitor authentication").

    token = sign_visitor_token({"email": email, "plan": "pro"}, context)
    return Response.redirect(visitor_return_url(location, token, context))

The token is a JWT (HS256) signed with the site's visitor key
(``context.environment.site.visitorSigningKey``, its UTF-8 bytes the key), for the site
(``aud``), with ``iat``, ``exp`` (``expires_in`` seconds later: the site refuses more than its
``VISITOR_TOKEN_MAX_AGE``, 600 s by default), a unique ``jti`` (the site takes a token once)
and the ``claims`` object.
"""

import time
import uuid
from urllib.parse import urlencode, urlsplit, urlunsplit

import jwt

#: The query parameter the site reads the token from.
TOKEN_PARAMETER = "visitor_token"  # noqa: S105 - a name, not a secret
DEFAULT_EXPIRES_IN = 300


class VisitorSigningError(RuntimeError):
    """The call has no site visitor key: not a site installation granted the scope."""


def _site(context) -> dict:
    site = context.environment.get("site") or {}
    if not site.get("visitorSigningKey") or not site.get("id"):
        raise VisitorSigningError(
            "this call has no site visitor key: only a site installation granted "
            "site:visitor:auth signs its visitors in"
        )
    return site


def sign_visitor_token(claims: dict, context, expires_in: int = DEFAULT_EXPIRES_IN) -> str:
    """A token for the call's site carrying ``claims`` (a JSON object), valid
    ``expires_in`` seconds."""
    if not isinstance(claims, dict):
        raise TypeError(f"claims must be a dict, not {type(claims).__name__}")
    if not isinstance(expires_in, int) or expires_in <= 0:
        raise ValueError("expires_in must be a positive number of seconds")
    site = _site(context)
    now = int(time.time())
    payload = {
        "aud": site["id"],
        "iat": now,
        "exp": now + expires_in,
        "jti": uuid.uuid4().hex,
        "claims": dict(claims),
    }
    return jwt.encode(payload, site["visitorSigningKey"].encode(), algorithm="HS256")


def visitor_return_url(location: str | None, token: str, context) -> str:
    """Where to send the visitor with their token: ``location`` (the address of the site the
    visitor asked for, ``visitor_authentication``'s ``location``) when it is one of the
    site's, else the site's home; with ``visitor_token`` added to its query."""
    home = _site(context).get("url") or ""
    address = location if location and home and location.startswith(home) else home
    parts = urlsplit(address)
    query = "&".join(part for part in (parts.query, urlencode({TOKEN_PARAMETER: token})) if part)
    return urlunsplit((parts.scheme, parts.netloc, parts.path, query, ""))
