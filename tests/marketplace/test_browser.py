"""The pages in a real browser: Debian's Chromium driven by Playwright, against a live server.

Skipped when Playwright or Chromium is missing (CI has both). Screenshots of the catalogue and
of a configuration page land in the system's temporary folder for a look.
"""

import io

import pytest
from django.core.management import call_command

from integrations.models import Installation
from tests.browser import SCREENSHOTS

pytestmark = pytest.mark.slow


def test_a_member_signs_in_installs_and_configures_an_integration(live_server, browser_page):
    call_command("seed_demo", stdout=io.StringIO())
    page = browser_page

    page.goto(f"{live_server.url}/marketplace/")
    page.fill("input[name=username]", "alice")
    page.fill("input[name=password]", "demo-password")
    page.click("button:has-text('Sign in')")

    page.wait_for_selector("h1:has-text('Integrations')")
    cards = page.locator(".card h2").all_inner_texts()
    assert {"Page analytics", "Release notes", "Slack notifications"} <= set(cards)
    assert "Partner search" not in cards  # globex's unlisted integration
    page.wait_for_load_state("load")  # every image (none is lazy here) loaded or failed
    assert page.evaluate("Array.from(document.images).every(i => i.complete && i.naturalWidth)")
    page.screenshot(path=str(SCREENSHOTS / "marketplace-catalogue.png"), full_page=True)

    page.select_option("select[name=category]", "analytics")
    page.click("button:has-text('Filter')")
    assert page.locator(".card h2").all_inner_texts() == ["Page analytics"]

    page.click("text=Page analytics")
    page.wait_for_selector("h1:has-text('Page analytics')")
    assert "See the page views of your sites" in page.inner_text(".scopes")
    page.select_option("#install-site", label="Acme Inc. docs")
    page.click("form:has(#install-site) button")
    page.wait_for_selector("h1:has-text('Install Page analytics?')")
    assert "Into: Site · Acme Inc. docs" in page.inner_text(".install-consent")
    page.click(".install-consent button:has-text('Install')")

    page.wait_for_selector(".status-panel .badge:has-text('Pending')")
    # Each problem in the form's own words, in the status and beside its field.
    assert "Tracking ID is required" in page.inner_text(".reasons")
    assert "Tracking ID is required" in page.inner_text(".field:has(#id_configuration-tracking_id)")
    page.fill("input[name=configuration-tracking_id]", "UA-1234")
    page.select_option("select[name=configuration-region]", "us")
    page.fill("input[name=configuration-sample_rate]", "50")
    page.screenshot(path=str(SCREENSHOTS / "marketplace-configuration.png"), full_page=True)
    page.click("button:has-text('Save configuration')")

    page.wait_for_selector(".status-panel .badge:has-text('Active')")
    assert "Saved. The installation is active." in page.inner_text(".messages")
    installation = Installation.objects.get(level="site", integration__name="page-analytics")
    assert installation.status == "active"
    assert installation.configuration == {
        "tracking_id": "UA-1234",
        "region": "us",
        "anonymize_ip": True,
        "sample_rate": 50,
    }
