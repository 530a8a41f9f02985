"""The Logs tab in a real browser (Debian's Chromium driven by Playwright), with two real
integrations run by the runtime host printing at once: each owner's tab shows its own lines
only, and the follow mode appends new lines as they are logged."""

import threading

import pytest
import requests
from django.utils import timezone

from integrations.environment import installation_public_endpoint
from integrations.gateway.log_store import CallRecord, integration_log_record
from integrations.services.installations import installation_create
from tests.factories import MembershipFactory, OrganizationFactory, SpaceFactory
from tests.integrations.conftest import (
    listing_approve,
)
from tests.integrations.test_integration_logs import publish_scripted

pytestmark = pytest.mark.slow


@pytest.fixture
def two_integrations(runtime, write_integration, organization, org_admin):
    """alpha (acme's) and beta (globex's), both installed into an acme space."""
    globex = OrganizationFactory(subdomain="globex")
    globex_admin = MembershipFactory(organization=globex, role="admin").user
    alpha = publish_scripted(write_integration, org_admin, "alpha", "acme")
    beta = listing_approve(publish_scripted(write_integration, globex_admin, "beta", "globex"))
    space = SpaceFactory(organization=organization)
    return {
        name: installation_create(
            user=org_admin, integration=integration, organization=organization, space=space
        )
        for name, integration in (("alpha", alpha), ("beta", beta))
    }


def call(installation, route: str):
    answer = requests.get(installation_public_endpoint(installation) + route, timeout=20)
    assert answer.status_code == 201, answer.text


def test_the_logs_tab_shows_its_integrations_lines_and_follows(
    browser_page,
    origins,
    two_integrations,
    org_admin,
):
    alpha, beta = two_integrations["alpha"], two_integrations["beta"]
    threads = [
        threading.Thread(target=call, args=(installation, f"/at-once-{number}"))
        for number in range(3)
        for installation in (alpha, beta)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()

    page = browser_page
    page.goto(f"{origins.PLATFORM_URL}/marketplace/login/")
    page.fill("input[name=username]", org_admin.username)
    page.fill("input[name=password]", "password")
    page.click("button:has-text('Sign in')")
    page.wait_for_selector(f".username:has-text('{org_admin.username}')")
    page.goto(f"{origins.PLATFORM_URL}/marketplace/orgs/acme/integrations/alpha/")
    page.click("a.logs-link")
    page.wait_for_selector("h1:has-text('Logs')")
    outputs = page.locator(".log-line pre.output").all_inner_texts()
    assert sorted(outputs) == [f"alpha fetched GET /at-once-{number}\n" for number in range(3)]

    page.check(".follow-toggle")
    call(beta, "/not-alphas")
    call(alpha, "/while-following")
    page.wait_for_selector(".log-line:has-text('alpha fetched GET /while-following')")
    lines = page.locator(".log-line").all_inner_texts()  # setup events may be logged too
    assert len([line for line in lines if "alpha fetched" in line]) == 4
    assert not [line for line in lines if "beta" in line]
    newest = page.locator(".log-line").last
    assert newest.locator("code.what").inner_text() == "GET /while-following"
    assert newest.locator(".status").inner_text() == "201"

    # A sample event's line (``trigger``: "test": true) comes with its badge when followed.
    integration_log_record(
        CallRecord(
            version=alpha.integration.latest_version,
            installation=alpha,
            kind="event",
            event="space_content_updated",
            request="",
            started_at=timezone.now(),
            outcome="ok",
            status=200,
            duration_ms=4,
            output="alpha sample handled\n",
            test=True,
        )
    )
    page.wait_for_selector(".log-line:has-text('alpha sample handled')")
    sample = page.locator(".log-line").last
    assert sample.locator(".badge.test-event").inner_text() == "test"
    assert page.locator(".log-line .badge.test-event").count() == 1
