"""Pages that follow what is in flight without a reload (Playwright, Debian's Chromium, a real
worker and a receiver that takes seconds to answer): a delivery's row and a delivery's page
turn from pending to succeeded in place, and a replay's progress until it is done."""

from datetime import timedelta

import pytest
from django.utils import timezone

from docplatform.revisions import space_content_update
from integrations.operators import OPERATOR
from integrations.services.installations import installation_pause, installation_resume
from tests.marketplace.test_delivery_log_browser import admin, hook, sign_in  # noqa: F401
from webhooks.services.ping import webhook_ping_send

pytestmark = [pytest.mark.slow, pytest.mark.usefixtures("webhook_settings", "celery_worker")]

SLOW_OK = (200, {}, b"", 2.0)  # the receiver answers after 2 seconds


@pytest.fixture(autouse=True)
def patient_sender(webhook_settings):
    webhook_settings.WEBHOOK_RESPONSE_TIMEOUT = 6.0  # longer than the receiver takes


@pytest.fixture
def page(live_server, browser_page, admin, receiver):  # noqa: F811
    """The admin's browser page, signed in; the receiver answers after 2 seconds."""
    receiver.respond(SLOW_OK)
    sign_in(browser_page, live_server, admin)
    return browser_page


def mark_the_document(page) -> None:
    """A mark that a reload or a navigation would lose."""
    page.evaluate("window.__sameDocument = true")


def still_the_same_document(page) -> bool:
    return page.evaluate("window.__sameDocument === true")


def test_a_pinged_installations_row_turns_succeeded_in_place(live_server, page, hook):  # noqa: F811
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


def test_a_test_events_page_follows_it_until_it_succeeds(live_server, page, hook):  # noqa: F811
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


def test_a_replays_progress_follows_it_until_it_is_done(live_server, page, hook):  # noqa: F811
    installation_pause(user=OPERATOR, installation=hook)
    space_content_update(space=hook.space, pages=[{"path": "p", "title": "P", "body": "b"}])
    installation_resume(user=OPERATOR, installation=hook)
    page.goto(f"{live_server.url}/marketplace/orgs/acme/installations/{hook.pk}/deliveries/")
    now = timezone.now()
    page.fill("input[name=replay-since]", (now - timedelta(hours=1)).strftime("%Y-%m-%dT%H:%M"))
    page.fill("input[name=replay-until]", (now + timedelta(minutes=2)).strftime("%Y-%m-%dT%H:%M"))
    page.click("button:has-text('Replay')")
    page.wait_for_selector(".messages:has-text('Replaying 1 event')")
    assert page.locator("[data-live=replays] [data-open]").count() == 1
    mark_the_document(page)

    page.wait_for_selector("[data-live=replays] .replay-detail:has-text('1 succeeded')")
    assert still_the_same_document(page)
    assert page.inner_text("[data-live=replays] .replay-status") == "Done"
    assert page.locator("[data-live=replays] [data-open]").count() == 0


def test_an_open_delivery_log_shows_a_new_delivery_and_stops_while_hidden(
    live_server,
    page,
    hook,  # noqa: F811
):
    page.goto(f"{live_server.url}/marketplace/orgs/acme/installations/{hook.pk}/deliveries/")
    assert "No events yet" in page.inner_text("[data-live=delivery-rows]")
    mark_the_document(page)
    fetches = []
    page.on("request", lambda r: r.headers.get("x-live") and fetches.append(r.url))

    webhook_ping_send(user=OPERATOR, installation=hook)  # made after the page opened
    page.wait_for_selector("[data-live=delivery-rows] tbody tr:has-text('ping')", timeout=12_000)
    page.wait_for_selector("[data-live=delivery-rows] .badge:has-text('Succeeded')")
    assert still_the_same_document(page)

    # A hidden tab fetches nothing; showing it again fetches at once.
    page.evaluate(
        "Object.defineProperty(document, 'hidden', {value: true, configurable: true});"
        "document.dispatchEvent(new Event('visibilitychange'))"
    )
    page.wait_for_timeout(500)
    before = len(fetches)
    page.wait_for_timeout(6_000)
    assert len(fetches) == before
    page.evaluate(
        "Object.defineProperty(document, 'hidden', {value: false, configurable: true});"
        "document.dispatchEvent(new Event('visibilitychange'))"
    )
    page.wait_for_timeout(1_000)
    assert len(fetches) > before
