"""A visitor's session on an authenticated site (README, "Visitor authentication").

The integration that signed the visitor in sends them to ``<site>/...?visitor_token=<jwt>``:
a JWT signed with the site's visitor key (HS256, the key's UTF-8 bytes), for the site
(``aud``), short-lived (``exp`` at most ``VISITOR_TOKEN_MAX_AGE`` seconds after now),
with ``iat``, a unique ``jti`` and a ``claims`` object. ``token_claims`` takes it once (its
``jti`` is kept until it expires: a replay is refused); ``session_start`` adds the claims of
the site's ``site:adaptive:write`` installations and makes the session: a value signed by
the platform (Django's signing, salted per site) holding the site, the installation that
signed the visitor in (another one set on the site ends the session), the claims and an
expiry, kept in an HttpOnly, SameSite=Lax cookie scoped to the site's path (Secure on https).

``visitor_claims(request, site)`` is the one reader of a session: the claims, or ``{}`` for a
public site or a visitor without a valid session.
"""

import json
import time
from datetime import UTC, datetime

import jwt
from django.conf import settings
from django.core import signing
from django.db import IntegrityError, transaction
from django.utils import timezone

from ..models import Site
from .models import VisitorTokenUse
from .visitor_auth import visitor_auth

#: The query parameter a visitor comes back with, and the site's session cookie.
TOKEN_PARAMETER = "visitor_token"  # noqa: S105 - a name, not a secret
SESSION_COOKIE = "dp_visitor_session"
#: A token longer than this is not read; a session's claims may take this much JSON.
MAX_TOKEN_LENGTH = 8192
MAX_CLAIMS_BYTES = 2048
#: Seconds of clock difference forgiven between the integration's clock and ours.
LEEWAY = 10


class VisitorTokenRefused(Exception):
    """Why a visitor token starts no session (told to the visitor on a 401 page)."""


def _salt(site: Site) -> str:
    return f"docplatform.sites.visitor-session:{site.pk}"


def token_claims(site: Site, token: str) -> dict:
    """The claims of a valid token for ``site``, marking it used; VisitorTokenRefused
    naming what is wrong otherwise (never anything else)."""
    if not isinstance(token, str) or not token or len(token) > MAX_TOKEN_LENGTH:
        raise VisitorTokenRefused("the sign-in token is malformed")
    try:
        decoded = jwt.decode(
            token,
            site.visitor_signing_key.encode(),
            algorithms=["HS256"],
            audience=site.pk,
            leeway=LEEWAY,
            options={"require": ["aud", "exp", "iat", "jti"]},
        )
    except jwt.ExpiredSignatureError as error:
        raise VisitorTokenRefused("the sign-in token has expired") from error
    except jwt.InvalidAudienceError as error:
        raise VisitorTokenRefused("the sign-in token is for another site") from error
    except jwt.InvalidSignatureError as error:
        raise VisitorTokenRefused("the sign-in token's signature is wrong") from error
    except jwt.MissingRequiredClaimError as error:
        raise VisitorTokenRefused(f"the sign-in token has no {error.claim}") from error
    except jwt.InvalidTokenError as error:
        raise VisitorTokenRefused(f"the sign-in token is malformed ({error})") from error
    claims, jti, expires = decoded.get("claims", {}), decoded["jti"], decoded["exp"]
    if not isinstance(claims, dict):
        raise VisitorTokenRefused("the sign-in token's claims are not an object")
    if not isinstance(jti, str) or not 0 < len(jti) <= 200:
        raise VisitorTokenRefused("the sign-in token's jti is not a short string")
    if expires > time.time() + settings.VISITOR_TOKEN_MAX_AGE + LEEWAY:
        limit = settings.VISITOR_TOKEN_MAX_AGE
        raise VisitorTokenRefused(f"the sign-in token lives longer than {limit} seconds")
    if _claims_size(claims) > MAX_CLAIMS_BYTES:
        raise VisitorTokenRefused(f"the sign-in token's claims exceed {MAX_CLAIMS_BYTES} bytes")
    _use_once(site, jti, datetime.fromtimestamp(expires + LEEWAY, tz=UTC))
    return claims


def _claims_size(claims: dict) -> int:
    return len(json.dumps(claims, separators=(",", ":"), ensure_ascii=False).encode())


def _use_once(site: Site, jti: str, expires_at: datetime) -> None:
    """Keep ``jti`` until the token expires; VisitorTokenRefused when it was used already.
    Uses past their token's expiry are forgotten (their tokens are refused as expired)."""
    VisitorTokenUse.objects.filter(expires_at__lt=timezone.now()).delete()
    try:
        with transaction.atomic():
            VisitorTokenUse.objects.create(site=site, jti=jti, expires_at=expires_at)
    except IntegrityError as error:
        raise VisitorTokenRefused("the sign-in token was used already") from error


def session_start(site: Site, claims: dict) -> str:
    """The signed session value of a visitor signed in with ``claims``: the token's, with
    the keys each ``site:adaptive:write`` installation's ``visitor_claims`` returns over
    them (``visitor_auth.claims_added``); when the result is too large for a cookie, the
    token's alone."""
    merged = visitor_auth().claims_added(site, claims)
    if _claims_size(merged) > MAX_CLAIMS_BYTES:
        merged = claims
    expires = int(time.time()) + settings.SITE_VISITOR_SESSION_AGE
    session = {
        "site": site.pk,
        "via": site.visitor_auth_installation,
        "claims": merged,
        "exp": expires,
    }
    return signing.dumps(session, salt=_salt(site), compress=True)


def session_cookie_set(response, site: Site, value: str) -> None:
    response.set_cookie(
        SESSION_COOKIE,
        value,
        max_age=settings.SITE_VISITOR_SESSION_AGE,
        path=f"/{site.pk}/",
        secure=settings.SITES_URL.startswith("https://"),
        httponly=True,
        samesite="Lax",
    )


def session_claims(request, site: Site) -> dict | None:
    """The claims of the visitor's valid session on ``site``, or None."""
    value = request.COOKIES.get(SESSION_COOKIE)
    if not value:
        return None
    try:
        session = signing.loads(value, salt=_salt(site), max_age=settings.SITE_VISITOR_SESSION_AGE)
    except signing.BadSignature:
        return None
    if not isinstance(session, dict) or session.get("site") != site.pk:
        return None
    if session.get("via") != site.visitor_auth_installation:
        return None  # signed in through an installation the site no longer signs in with
    if not isinstance(session.get("exp"), int) or session["exp"] < time.time():
        return None
    claims = session.get("claims")
    return claims if isinstance(claims, dict) else None


def visitor_claims(request, site) -> dict:
    """The verified claims of the visitor making ``request`` on ``site``: ``{}`` on a public
    site, and for a visitor without a valid session."""
    if not site.authenticated:
        return {}
    return session_claims(request, site) or {}
