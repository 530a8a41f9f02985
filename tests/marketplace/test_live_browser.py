"""Pages that follow what is in flight without a reload (Playwright, Debian's Chromium, a real
worker and a receiver that takes seconds to answer): a delivery's row and a delivery's page
turn from pending to succeeded in place."""

import pytest

from tests.marketplace.test_browser import browser_page  # noqa: F401 - the fixture
from tests.marketplace.test_delivery_log_browser import admin, hook, sign_in  # noqa: F401

pytestmark = [pytest.mark.slow, pytest.mark.usefixtures("webhook_settings", "celery_worker")]

SLOW_OK = (200, {}, b"", 2.0)  # the receiver answers after 2 seconds


@pytest.fixture(autouse=True)
def patient_sender(webhook_settings):
    webhook_settings.WEBHOOK_RESPONSE_TIMEOUT = 6.0  # longer than the receiver takes


def mark_the_document(page) -> None:
    """A mark that a reload or a navigation would lose."""
    page.evaluate("window.__sameDocument = true")


def still_the_same_document(page) -> bool:
    return page.evaluate("window.__sameDocument === true")


def test_a_pinged_installations_row_turns_succeeded_in_place(
    live_server,
    browser_page,  # noqa: F811
    admin,  # noqa: F811
    hook,  # noqa: F811
    receiver,
):
    receiver.respond(SLOW_OK)
    page = browser_page
    sign_in(page, live_server, admin)
    page.goto(f"{live_server.url}/marketplace/orgs/acme/installations/{hook.pk}/")
    page.click("button:has-text('Send test ping')")
    page.wait_for_selector(".messages:has-text('Test ping sent')")
    row = page.locator("[data-live=recent-deliveries] tbody tr").first
    assert "Pending" in row.inner_text()
    mark_the_document(page)

    page.wait_for_selector("[data-live=recent-deliveries] tbody tr .badge:has-text('Succeeded')")
    assert still_the_same_document(page)
    assert page.locator(".messages:has-text('Test ping sent')").count() == 1  # not re-rendered
    assert page.locator("[data-live=recent-deliveries] [data-open]").count() == 0


def test_a_test_events_page_follows_it_until_it_succeeds(
    live_server,
    browser_page,  # noqa: F811
    admin,  # noqa: F811
    hook,  # noqa: F811
    receiver,
):
    receiver.respond(SLOW_OK)
    page = browser_page
    sign_in(page, live_server, admin)
    page.goto(f"{live_server.url}/marketplace/orgs/acme/installations/{hook.pk}/deliveries/")
    page.select_option("select[name=event_type]", "space_content_updated")
    page.click("button:has-text('Send test event')")
    page.wait_for_selector("h1 .badge")
    assert page.inner_text("h1 .badge") == "Pending"
    mark_the_document(page)

    page.wait_for_selector("h1 .badge:has-text('Succeeded')")
    assert still_the_same_document(page)
    assert "HTTP 200" in page.inner_text(".attempt")

    page.goto(f"{live_server.url}/marketplace/orgs/acme/installations/{hook.pk}/deliveries/")
    assert page.locator("[data-live=delivery-rows] [data-open]").count() == 0
