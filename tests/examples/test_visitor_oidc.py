"""``examples/visitor-oidc`` end to end: a site open only to signed-in visitors, through the
example published and installed on the site and run by the real runtime host, against a real
OpenID Connect provider (django-oauth-toolkit with OIDC on, in the live test server: ID tokens
signed HS256 with the client's secret), in Chromium. Four origins, as in production: the
platform (the provider here, ``localhost``), the integrations (``127.0.0.1``), the sites
(``sites.test``) and the runtime host."""

import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa
from django.db import connections
from django.test import RequestFactory
from oauth2_provider.models import Application
from oauth2_provider.oauth2_validators import OAuth2Validator

from docplatform.sites import site_services
from docplatform.sites.visitor_sessions import visitor_claims
from integrations.environment import installation_public_endpoint
from integrations.models import IntegrationLog
from integrations.services import integration_publish_folder
from integrations.services.installations import installation_create
from tests.docplatform.sites import conftest as site_fixtures
from tests.docplatform.sites import test_sites_browser as site_browser_fixtures
from tests.integrations.test_oauth_flow import EXAMPLE as OAUTH_EXAMPLE

pytestmark = [pytest.mark.slow, pytest.mark.urls("tests.integrations.oauth_provider")]

EXAMPLE = OAUTH_EXAMPLE.parent / "visitor-oidc"
CLIENT_ID = "docs-site"
CLIENT_SECRET = "docs-site-client-secret-" + "s" * 20
SITES_HOST = site_browser_fixtures.SITES_HOST
# The sites' fixtures: a site of acme publishing spaces, Chromium reaching ``sites.test``.
site, handbook, unlisted, private = (
    site_fixtures.site,
    site_fixtures.handbook,
    site_fixtures.unlisted,
    site_fixtures.private,
)
site_browser, sites_origin = site_browser_fixtures.site_browser, site_browser_fixtures.sites_origin


class ClaimsValidator(OAuth2Validator):
    """The provider's ID tokens say who signed in, and their plan (every claim, whatever the
    scopes asked)."""

    oidc_claim_scope = None

    def get_additional_claims(self, request):
        return {"email": request.user.email, "plan": "pro"}


@pytest.fixture
def oidc_provider(settings, live_server):
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    settings.LOGIN_URL = "marketplace:login"  # where the provider's visitors sign in
    settings.OAUTH2_PROVIDER = {
        "OIDC_ENABLED": True,
        "OIDC_RSA_PRIVATE_KEY": key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        ).decode(),
        "OAUTH2_VALIDATOR_CLASS": f"{__name__}.ClaimsValidator",
        "PKCE_REQUIRED": False,
        "SCOPES": {"openid": "Who you are", "email": "Your e-mail", "profile": "Your name"},
    }
    return f"{live_server.url}/o"


@pytest.fixture
def locked_site(runtime, sites_origin, oidc_provider, org_admin, site):
    """The site, open only to visitors signed in through the example, installed on it."""
    integration = integration_publish_folder(path=EXAMPLE, publisher=org_admin).version
    installation = installation_create(
        user=org_admin,
        integration=integration.integration,
        organization=site.organization,
        site=site,
        configuration={
            "issuer": oidc_provider,
            "client_id": CLIENT_ID,
            "client_secret": CLIENT_SECRET,
        },
    )
    assert installation.status == "active", installation.status_reasons
    Application.objects.create(
        name="Acme docs site",
        client_id=CLIENT_ID,
        client_secret=CLIENT_SECRET,
        hash_client_secret=False,  # it signs the ID tokens (HS256)
        client_type=Application.CLIENT_CONFIDENTIAL,
        authorization_grant_type=Application.GRANT_AUTHORIZATION_CODE,
        redirect_uris=installation_public_endpoint(installation) + "/callback",
        algorithm=Application.HS256_ALGORITHM,
        skip_authorization=True,
    )
    site_services.site_update(
        site=site, actor=org_admin, audience="authenticated", auth_installation=installation.pk
    )
    site.installation = installation
    return site


def test_a_visitor_signs_in_at_the_provider_and_reads_the_site(
    locked_site, handbook, site_browser, sites_origin, live_server, org_member
):
    page = site_browser
    tokens = []
    page.on(
        "request",
        lambda request: tokens.append(request.url) if "visitor_token=" in request.url else None,
    )
    intro = f"{sites_origin}/{locked_site.pk}/{handbook.pk}/intro"
    page.goto(intro)
    # Sent to the provider, through the integration: its sign-in page.
    page.wait_for_url(lambda url: "/marketplace/login/" in url)
    assert "Installing takes a minute" not in page.content()
    page.fill("input[name=username]", org_member.username)
    page.fill("input[name=password]", "password")
    page.click("button:has-text('Sign in')")
    # Back on the site's page, signed in, the token gone from the address.
    page.locator("h1.doc-title", has_text="Introduction").wait_for()
    assert page.url == intro
    assert "Installing takes a minute" in page.content()
    [with_token] = tokens
    assert with_token.startswith(intro + "?visitor_token=")
    [cookie] = [c for c in page.context.cookies(intro) if c["name"] == "dp_visitor_session"]
    assert cookie["httpOnly"] and cookie["sameSite"] == "Lax"
    assert cookie["path"] == f"/{locked_site.pk}/"
    assert page.evaluate("document.cookie") == ""
    # The session holds what the provider said of the visitor.
    request = RequestFactory().get("/")
    request.COOKIES["dp_visitor_session"] = cookie["value"]
    claims = visitor_claims(request, locked_site)
    assert claims == {"sub": str(org_member.pk), "email": org_member.email, "plan": "pro"}
    # The rest of the site, and its search.
    page.goto(f"{sites_origin}/{locked_site.pk}/")
    page.get_by_role("link", name="Handbook").click()
    page.get_by_role("searchbox", name="Search this site").fill("installer")
    page.get_by_role("button", name="Search").click()
    page.locator(".search-hits mark", has_text="installer").wait_for()
    # The sign-in ran the example's code in the runtime host.
    calls = IntegrationLog.objects.filter(installation=locked_site.installation)
    assert calls.filter(kind="fetch").count() >= 2  # visitor_authentication and /callback

    # The same token again, in another browser: refused, no session.
    other = page.context.browser.new_context()
    replay = other.new_page()
    answer = replay.goto(with_token)
    assert answer.status == 401
    assert "used already" in replay.content()
    assert not [c for c in other.cookies(intro) if c["name"] == "dp_visitor_session"]
    other.close()
    connections.close_all()


def test_without_signing_in_a_visitor_never_sees_a_page(
    locked_site, handbook, site_browser, sites_origin
):
    page = site_browser
    for address in (
        f"/{locked_site.pk}/",
        f"/{locked_site.pk}/{handbook.pk}/guide/install",
        f"/{locked_site.pk}/search?q=installer",
    ):
        page.goto(sites_origin + address)
        assert "Run the installer" not in page.content()
        assert "Installing takes a minute" not in page.content()
    answer = page.goto(f"{sites_origin}/{locked_site.pk}/?visitor_token=forged.token.here")
    assert answer.status == 401
    assert "You could not be signed in" in page.content()
    assert SITES_HOST in sites_origin
