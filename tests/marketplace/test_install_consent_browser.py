"""Consent at install in a real browser (Playwright, Debian's Chromium), against a live
server: the install screen lists the scopes and the hosts, and installs only once confirmed."""

import pytest

from integrations.models import Installation
from tests.browser import SCREENSHOTS
from tests.factories import MembershipFactory, OrganizationFactory
from tests.marketplace.test_install_consent import publish_caller

pytestmark = pytest.mark.slow


@pytest.mark.django_db(transaction=True)
def test_the_install_screen_lists_scopes_and_hosts_and_installs_only_once_confirmed(
    live_server,
    browser_page,
    tmp_path,
):
    acme = OrganizationFactory(subdomain="acme", title="Acme")
    admin = MembershipFactory(organization=acme, role="admin").user
    publish_caller(admin, tmp_path, ["api.example.com", "*.example.org"])
    page = browser_page
    page.goto(f"{live_server.url}/marketplace/login/")
    page.fill("input[name=username]", admin.username)
    page.fill("input[name=password]", "password")
    page.click("button:has-text('Sign in')")
    page.wait_for_selector("h1:has-text('Integrations')")

    page.goto(f"{live_server.url}/marketplace/orgs/acme/integrations/caller/")
    page.click("button:has-text('Install in Acme')")
    page.wait_for_selector("h1:has-text('Install Caller?')")
    assert page.locator(".install-consent .scopes li").all_inner_texts() == [
        "Read the content of your spaces space:content:read",
        "See the page views of your sites site:views:read",
    ]
    assert "may call this platform's API and these hosts" in page.inner_text(".network")
    assert page.locator(".install-consent .hosts li").all_inner_texts() == [
        "api.example.com",
        "*.example.org",
    ]
    page.screenshot(path=str(SCREENSHOTS / "marketplace-install-consent.png"), full_page=True)
    assert not Installation.objects.exists()

    page.click("a:has-text('Cancel')")
    page.wait_for_selector("h1:has-text('Caller')")
    assert not Installation.objects.exists()

    page.click("button:has-text('Install in Acme')")
    page.click(".install-consent button:has-text('Install')")
    page.wait_for_selector(".messages:has-text('Caller is installed.')")
    installation = Installation.objects.get(integration__name="caller")
    assert (installation.organization, installation.level) == (acme, "organization")
