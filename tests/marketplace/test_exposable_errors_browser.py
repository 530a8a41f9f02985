"""An integration's ExposableError seen in Chromium: its words as text, never markup (skipped
without Playwright or Chromium, as tests/marketplace/test_browser.py is)."""

import pytest

from integrations.services.installations import installation_create
from tests.factories import SpaceFactory
from tests.integrations import test_exposable_errors

pytestmark = pytest.mark.slow

installation = test_exposable_errors.installation  # the "reporter" integration, installed


def sign_in(page, url: str, user):
    page.goto(url)
    page.fill("input[name=username]", user.username)
    page.fill("input[name=password]", "password")
    page.click("button:has-text('Sign in')")


def test_the_authors_words_are_shown_as_text(
    live_server, browser_page, installation, org_admin, organization
):
    page = browser_page
    base = f"{live_server.url}/marketplace/orgs/acme/installations"
    sign_in(page, f"{base}/{installation.pk}/", org_admin)
    error = page.locator(".component-error")
    error.wait_for()
    assert "could not be shown: Connect your account <b>first</b>." in error.inner_text()
    assert error.locator("b").count() == 0  # the integration's markup is never markup here

    space = installation_create(
        user=org_admin,
        integration=installation.integration,
        organization=organization,
        space=SpaceFactory(organization=organization, title="Handbook"),
    )
    page.goto(f"{base}/{space.pk}/")
    page.locator(":text('Connect Slack first, then pick a channel')").wait_for()
    page.click("button:has-text('Insert preview')")
    preview = page.locator(".block-preview .component")
    preview.locator(":text('Ready.')").wait_for()
    preview.locator("button:has-text('Export')").click()
    page.locator(
        ":text(\"The 'export' action failed: The export is already running; try again in a "
        'minute.")'
    ).wait_for()
