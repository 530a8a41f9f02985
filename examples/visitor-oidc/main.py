"""Visitor sign-in with OpenID Connect: a site's visitors sign in at the provider (the
authorization code flow), and come back to the site with a visitor token carrying the ID
token's claims.

- ``visitor_authentication``: the site sends a visitor without a session here (``location``:
  the site's address they asked for). It reads the provider's discovery document, keeps a
  state, a nonce and the location in a cookie of its own (signed with the client secret, on
  the integrations origin, scoped to the installation's endpoint) and redirects to the
  provider's authorization endpoint.
- ``fetch`` ``/callback``: the provider's redirect. It checks the state against the cookie,
  exchanges the code at the token endpoint (HTTP Basic with the client's id and secret),
  checks the ID token (issuer, audience, expiry, nonce; its signature when it is HS256, made
  with the client secret; another algorithm's token is trusted as the token endpoint's own
  answer, OpenID Connect Core 3.1.3.7), signs a visitor token with its claims
  (``sign_visitor_token``) and sends the visitor back to the site with it.
"""

import base64
import hashlib
import hmac
import json
import secrets
from http.cookies import SimpleCookie
from urllib.parse import urlencode, urlsplit

import jwt
from docplatform_sdk import Response, create_integration, sign_visitor_token, visitor_return_url

COOKIE = "visitor_oidc"
SCOPES = "openid email profile"
#: Claims about the token itself, not about the visitor: not handed to the site.
PROTOCOL_CLAIMS = {"iss", "aud", "exp", "iat", "nbf", "nonce", "at_hash", "auth_time", "azp", "jti"}
STATE_SECONDS = 600


def _settings(context) -> dict:
    configuration = (context.environment.siteInstallation or {}).get("configuration") or {}
    return {key: configuration.get(key) or "" for key in ("issuer", "client_id", "client_secret")}


def _discovery(context, issuer: str) -> dict:
    answer = context.fetch(issuer.rstrip("/") + "/.well-known/openid-configuration")
    if answer.status != 200:
        raise RuntimeError(f"the provider's discovery document answered {answer.status}")
    return answer.json()


def _endpoint(context) -> str:
    return context.environment.siteInstallation["urls"]["publicEndpoint"]


def _callback_url(context) -> str:
    return _endpoint(context) + "/callback"


def _cookie(value: str, context, max_age: int) -> str:
    """The flow's cookie, for the installation's endpoint alone (where ``/callback`` is)."""
    path = urlsplit(_endpoint(context)).path.rstrip("/") + "/"
    return f"{COOKIE}={value}; Path={path}; Max-Age={max_age}; HttpOnly; SameSite=Lax"


def _sealed(value: dict, key: str) -> str:
    body = base64.urlsafe_b64encode(json.dumps(value).encode()).decode()
    return body + "." + hmac.new(key.encode(), body.encode(), hashlib.sha256).hexdigest()


def _opened(sealed: str, key: str) -> dict | None:
    body, _, mac = sealed.rpartition(".")
    expected = hmac.new(key.encode(), body.encode(), hashlib.sha256).hexdigest()
    if not body or not hmac.compare_digest(mac, expected):
        return None
    return json.loads(base64.urlsafe_b64decode(body.encode()))


def _refused(message: str, status: int = 401) -> Response:
    return Response.text(f"Signing in failed: {message}", status=status)


def visitor_authentication(request, context):
    settings = _settings(context)
    if not all(settings.values()):
        return _refused("the sign-in is not configured yet (issuer, client id, secret)", 503)
    provider = _discovery(context, settings["issuer"])
    state, nonce = secrets.token_urlsafe(24), secrets.token_urlsafe(24)
    kept = {"state": state, "nonce": nonce, "location": request.query.get("location", "")}
    query = urlencode(
        {
            "response_type": "code",
            "client_id": settings["client_id"],
            "redirect_uri": _callback_url(context),
            "scope": SCOPES,
            "state": state,
            "nonce": nonce,
        }
    )
    response = Response.redirect(f"{provider['authorization_endpoint']}?{query}")
    sealed = _sealed(kept, settings["client_secret"])
    response.headers["Set-Cookie"] = _cookie(sealed, context, STATE_SECONDS)
    return response


def callback(request, context):
    settings = _settings(context)
    cookie = SimpleCookie(request.headers.get("Cookie", ""))
    kept = _opened(cookie[COOKIE].value, settings["client_secret"]) if COOKIE in cookie else None
    if kept is None or not hmac.compare_digest(kept["state"], request.query.get("state", "")):
        return _refused("the sign-in expired or was started elsewhere: start it again", 400)
    if "error" in request.query:
        return _refused(request.query.get("error_description") or request.query["error"])
    provider = _discovery(context, settings["issuer"])
    basic = base64.b64encode(f"{settings['client_id']}:{settings['client_secret']}".encode())
    answer = context.fetch(
        provider["token_endpoint"],
        method="POST",
        headers={
            "Authorization": "Basic " + basic.decode(),
            "Content-Type": "application/x-www-form-urlencoded",
            "Accept": "application/json",
        },
        body=urlencode(
            {
                "grant_type": "authorization_code",
                "code": request.query.get("code", ""),
                "redirect_uri": _callback_url(context),
            }
        ),
    )
    if answer.status != 200 or "id_token" not in answer.json():
        return _refused(f"the provider's token endpoint answered {answer.status}", 502)
    id_token = answer.json()["id_token"]
    signed_with_secret = jwt.get_unverified_header(id_token).get("alg") == "HS256"
    try:
        identity = jwt.decode(
            id_token,
            settings["client_secret"].encode(),
            algorithms=["HS256"] if signed_with_secret else None,
            audience=settings["client_id"],
            issuer=provider["issuer"],
            options={"verify_signature": signed_with_secret, "require": ["exp", "sub"]},
        )
    except jwt.InvalidTokenError as error:
        return _refused(f"the ID token is not valid ({error})")
    if identity.get("nonce") != kept["nonce"]:
        return _refused("the ID token is not for this sign-in (nonce)")
    claims = {key: value for key, value in identity.items() if key not in PROTOCOL_CLAIMS}
    token = sign_visitor_token(claims, context, expires_in=120)
    response = Response.redirect(visitor_return_url(kept["location"], token, context))
    response.headers["Set-Cookie"] = _cookie("", context, 0)
    return response


def fetch(request, context):
    if request.route == "/callback":
        return callback(request, context)
    return Response.json({"error": "not_found", "message": "no such page"}, status=404)


integration = create_integration(fetch=fetch, visitor_authentication=visitor_authentication)
