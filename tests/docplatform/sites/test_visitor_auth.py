"""An authenticated site's door: a visitor without a session is sent to sign in through the
site's installation granted ``site:visitor:auth`` (its code run by the real runtime host), or
refused (search, feedback, JSON); a visitor token starts a session once, and every bad token
(wrong signature, another site's, expired, replayed, malformed, too long-lived) is a 401 page,
never a session; claims come from the token, and from ``site:adaptive:write``
installations' ``visitor_claims`` within its deadline."""

import time
from urllib.parse import parse_qs, urlsplit

import pytest
from django.test import RequestFactory

from docplatform.sites import site_services
from docplatform.sites.models import VisitorTokenUse
from docplatform.sites.visitor_sessions import SESSION_COOKIE, visitor_claims
from integrations.models import Installation, IntegrationLog
from tests.factories import SiteFactory

from .visitor_support import (
    ADDER,
    SIGNER,
    home,
    install_on_site,
    publish_site_integration,
    token_for,
)


def signed_in(visitor, site, claims=None):
    """The visitor, back from signing in with ``claims``."""
    answer = visitor.get(home(site), {"visitor_token": token_for(site, claims or {"sub": "v1"})})
    assert answer.status_code == 302, answer.content
    return answer


def test_a_public_site_is_read_without_signing_in(visitor, site, handbook):
    assert visitor.get(home(site)).status_code == 200
    assert visitor.get(f"/{site.pk}/{handbook.pk}/intro").status_code == 200
    request = RequestFactory().get("/")
    assert visitor_claims(request, site) == {}


def test_a_visitor_without_a_session_is_sent_to_the_integration_to_sign_in(
    visitor, locked, handbook, signer, settings
):
    page = visitor.get(f"/{locked.pk}/{handbook.pk}/intro", {"lang": "en"})
    assert page.status_code == 302
    address = urlsplit(page["Location"])
    assert f"{address.scheme}://{address.netloc}" == settings.INTEGRATIONS_URL
    assert address.path == f"/visitor-auth/{signer.pk}"
    location = parse_qs(address.query)["location"][0]
    assert location == f"{settings.SITES_URL}/{locked.pk}/{handbook.pk}/intro?lang=en"
    assert b"Installing takes a minute" not in page.content
    # The home page and unknown spaces alike: nothing of the site is read before the door.
    assert visitor.get(home(locked)).status_code == 302
    assert visitor.get(f"/{locked.pk}/NoSuchSpace/").status_code == 302


def test_search_feedback_and_json_are_refused_without_a_session(visitor, locked, handbook):
    search = visitor.get(f"/{locked.pk}/search", {"q": "installer"})
    assert search.status_code == 401
    assert b"Sign in" in search.content and b"Run the installer" not in search.content
    feedback = visitor.post(
        f"/{locked.pk}/{handbook.pk}/-/feedback",
        {"page": "intro", "rating": "good"},
        content_type="application/json",
    )
    assert feedback.status_code == 401
    assert "visitor" in feedback.json()["errors"]
    as_json = visitor.get(home(locked), HTTP_ACCEPT="application/json")
    assert as_json.status_code == 401


def test_the_sign_in_runs_the_integrations_handler_through_the_runtime(
    locked, signer, handbook, runtime, client, settings
):
    page = f"{settings.SITES_URL}/{locked.pk}/{handbook.pk}/intro"
    host = urlsplit(settings.INTEGRATIONS_URL).netloc
    answer = client.get(f"/visitor-auth/{signer.pk}", {"location": page}, HTTP_HOST=host)
    assert answer.status_code == 302
    assert answer["Location"] == f"https://idp.example/authorize?back={page}"
    # The handler's call, whatever setup events the worker delivered meanwhile.
    assert IntegrationLog.objects.filter(
        installation=signer, kind=IntegrationLog.Kind.FETCH
    ).exists()
    # A location off the site, or an installation the site does not sign in through: refused.
    elsewhere = client.get(
        f"/visitor-auth/{signer.pk}", {"location": "https://evil.example/"}, HTTP_HOST=host
    )
    assert elsewhere.status_code == 400
    site_services.site_update(site=locked, actor=None, audience="public")
    gone = client.get(f"/visitor-auth/{signer.pk}", {"location": page}, HTTP_HOST=host)
    assert gone.status_code == 404


def test_a_token_starts_a_session_once_and_the_site_is_read(visitor, locked, handbook, settings):
    token = token_for(locked, {"sub": "v1", "plan": "pro"})
    address = f"/{locked.pk}/{handbook.pk}/intro"
    back = visitor.get(address, {"visitor_token": token, "lang": "en"})
    assert back.status_code == 302
    assert back["Location"] == f"{settings.SITES_URL}{address}?lang=en"
    cookie = back.cookies[SESSION_COOKIE]
    assert cookie["httponly"] and cookie["samesite"] == "Lax"
    assert cookie["path"] == f"/{locked.pk}/"
    assert not cookie["secure"]  # SITES_URL is http here
    page = visitor.get(address)
    assert page.status_code == 200
    assert b"Installing takes a minute" in page.content
    assert page["Cache-Control"] == "private, no-store"  # a signed-in visitor's page
    assert "ETag" not in page
    assert visitor.get(f"/{locked.pk}/search", {"q": "installer"}).status_code == 200
    request = RequestFactory().get(address)
    request.COOKIES[SESSION_COOKIE] = cookie.value
    assert visitor_claims(request, locked) == {"sub": "v1", "plan": "pro"}
    # Replayed, by anyone: refused.
    replay = visitor.__class__(HTTP_HOST=visitor.defaults["HTTP_HOST"])
    again = replay.get(address, {"visitor_token": token})
    assert again.status_code == 401
    assert b"used already" in again.content
    assert SESSION_COOKIE not in again.cookies


def test_the_session_is_secure_on_https(visitor, locked, settings, sites_host):
    settings.SITES_URL = settings.SITES_URL.replace("http://", "https://")
    answer = visitor.get(home(locked), {"visitor_token": token_for(locked, {})}, secure=True)
    assert answer.cookies[SESSION_COOKIE]["secure"]


@pytest.mark.parametrize(
    ("changes", "said"),
    [
        ({"key": "not-the-sites-key-" * 3}, b"signature is wrong"),
        ({"aud": "AnotherSite"}, b"for another site"),
        ({"exp": int(time.time()) - 120, "iat": int(time.time()) - 300}, b"has expired"),
        ({"exp": int(time.time()) + 7200}, b"lives longer than 600 seconds"),
        ({"jti": None}, b"has no jti"),
        ({"claims": ["plan", "pro"]}, b"claims are not an object"),
    ],
)
def test_a_bad_token_is_a_401_page_and_no_session(visitor, locked, changes, said):
    answer = visitor.get(home(locked), {"visitor_token": token_for(locked, {}, **changes)})
    assert answer.status_code == 401
    assert said in answer.content
    assert SESSION_COOKIE not in answer.cookies
    assert b"Sign in</a>" in answer.content  # a way to try again
    assert visitor.get(home(locked)).status_code == 302


@pytest.mark.parametrize("token", ["", "garbage", "a.b.c", "x" * 9000, "e30.e30.e30"])
def test_a_malformed_token_is_a_401_never_a_500(visitor, locked, token):
    answer = visitor.get(home(locked), {"visitor_token": token})
    assert answer.status_code == 401
    assert b"malformed" in answer.content


def test_another_sites_session_or_token_is_refused(visitor, locked, organization, handbook):
    other = SiteFactory(organization=organization, title="Other")
    other.spaces.add(handbook)
    site_services.site_update(site=other, actor=None, audience="public")
    # A token signed with another site's key for this site.
    forged = token_for(locked, {}, key=other.visitor_signing_key)
    assert visitor.get(home(locked), {"visitor_token": forged}).status_code == 401
    # This site's session is not sent to, nor taken by, another site's pages.
    signed_in(visitor, locked)
    cookie = visitor.cookies[SESSION_COOKIE]
    assert cookie["path"] == f"/{locked.pk}/"


def test_a_site_whose_sign_in_installation_lost_its_scope_is_closed_not_public(
    visitor, locked, signer
):
    Installation.objects.filter(pk=signer.pk).update(granted_scopes=[])
    answer = visitor.get(home(locked))
    assert answer.status_code == 503
    assert b"Signing in is unavailable" in answer.content
    Installation.objects.filter(pk=signer.pk).delete()
    assert visitor.get(home(locked)).status_code == 503


def test_used_tokens_are_forgotten_once_expired(visitor, locked):
    signed_in(visitor, locked)
    assert VisitorTokenUse.objects.count() == 1
    VisitorTokenUse.objects.update(expires_at="2000-01-01T00:00:00Z")
    signed_in(visitor.__class__(HTTP_HOST=visitor.defaults["HTTP_HOST"]), locked)
    assert VisitorTokenUse.objects.count() == 1


# --- visitor_claims (site:adaptive:write) ---------------------------------------------------


@pytest.fixture
def adder(tmp_path, org_admin, locked):
    integration = publish_site_integration(
        tmp_path / "adder", org_admin, name="adder", scopes=["site:adaptive:write"], code=ADDER
    )
    return install_on_site(integration, org_admin, locked)


def session_of(visitor, site) -> dict:
    request = RequestFactory().get("/")
    request.COOKIES[SESSION_COOKIE] = visitor.cookies[SESSION_COOKIE].value
    return visitor_claims(request, site)


def test_an_adaptive_installation_adds_claims_when_a_session_starts(
    visitor, locked, adder, runtime
):
    signed_in(visitor, locked, {"sub": "v1", "plan": "free"})
    assert session_of(visitor, locked) == {
        "sub": "v1",
        "plan": "pro",  # its keys win
        "team": "docs",
        "seen": {"sub": "v1", "plan": "free"},  # it was given the token's claims
    }
    # The handler's call, whatever setup events the worker delivered meanwhile.
    assert IntegrationLog.objects.filter(installation=adder, event="visitor_claims").exists()


@pytest.mark.slow
def test_a_slow_adaptive_installation_never_stops_the_sign_in(
    visitor, locked, adder, runtime, settings
):
    settings.VISITOR_CLAIMS_DEADLINE = 0.5
    signed_in(visitor, locked, {"sub": "v1", "slow": True})
    # the adder answers after 2 s: the sign-in went on at the deadline, without its claims
    assert session_of(visitor, locked) == {"sub": "v1", "slow": True}


def test_without_site_adaptive_write_no_claims_are_asked(
    visitor, locked, adder, runtime, organization
):
    Installation.objects.filter(pk=adder.pk).update(granted_scopes=[])
    signed_in(visitor, locked, {"sub": "v1"})
    assert session_of(visitor, locked) == {"sub": "v1"}
    assert not IntegrationLog.objects.filter(installation=adder, event="visitor_claims").exists()


def test_the_beacon_refuses_an_authenticated_sites_visits(locked, handbook, settings):
    from tests.api_helpers import API, api_client

    url = f"{settings.SITES_URL}/{locked.pk}/{handbook.pk}/intro"
    beacon = api_client()
    assert beacon.post(f"{API}/beacon/sites/{locked.pk}/views/", {"url": url}).status_code == 403
    rating = {"url": url, "pageId": "x", "rating": "good"}
    assert beacon.post(f"{API}/beacon/sites/{locked.pk}/feedback/", rating).status_code == 403


def test_another_sign_in_installation_ends_the_sessions(visitor, locked, tmp_path, org_admin):
    signed_in(visitor, locked)
    assert visitor.get(home(locked)).status_code == 200
    integration = publish_site_integration(
        tmp_path / "other",
        org_admin,
        name="other-signer",
        scopes=["site:visitor:auth"],
        code=SIGNER,
    )
    other = install_on_site(integration, org_admin, locked)
    site_services.site_update(site=locked, actor=org_admin, auth_installation=other.pk)
    answer = visitor.get(home(locked))
    assert answer.status_code == 302
    assert f"/visitor-auth/{other.pk}" in answer["Location"]
