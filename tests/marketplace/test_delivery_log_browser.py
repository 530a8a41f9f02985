"""The delivery log in a real browser (Playwright, Debian's Chromium) against a live server, a
real worker and a real receiver: the list's filters, a delivery's attempts, a test event,
"Resend all failed since ..." with its progress, and the disabled-endpoint banner with its
Re-enable button. Screenshots land in /tmp/shots/ for a look."""

import json
import re
import uuid
from datetime import timedelta
from pathlib import Path

import pytest
from django.utils import timezone

from docplatform.events.models import Delivery
from integrations.models import Integration
from integrations.operators import OPERATOR
from integrations.services.installations import installation_create
from tests.conftest import wait_until
from tests.factories import MembershipFactory, OrganizationFactory, SpaceFactory
from webhooks.models import DeliveryAttempt, EndpointState
from webhooks.services.endpoints import endpoint_disable
from webhooks.services.ping import webhook_ping_send

pytestmark = [pytest.mark.slow, pytest.mark.usefixtures("webhook_settings", "celery_worker")]

SHOTS = Path("/tmp/shots")


@pytest.fixture
def admin(celery_worker):
    SHOTS.mkdir(exist_ok=True)
    return MembershipFactory(
        organization=OrganizationFactory(subdomain="acme", title="Acme"), role="admin"
    ).user


@pytest.fixture
def hook(admin, receiver):
    organization = admin.memberships.get().organization
    return installation_create(
        user=admin,
        integration=Integration.objects.get(name="webhook"),
        organization=organization,
        space=SpaceFactory(organization=organization, title="Product guide"),
        configuration={"url": receiver.url, "space_content_updated": True},
    )


def sign_in(page, live_server, user) -> None:
    page.goto(f"{live_server.url}/marketplace/login/")
    page.fill("input[name=username]", user.username)
    page.fill("input[name=password]", "password")
    page.click("button:has-text('Sign in')")
    page.wait_for_selector("a:has-text('Developer settings')")


def log_url(live_server, hook) -> str:
    return f"{live_server.url}/marketplace/orgs/acme/installations/{hook.pk}/deliveries/"


def settled(delivery) -> Delivery:
    wait_until(lambda: Delivery.objects.get(pk=delivery.pk).status not in Delivery.OPEN_STATUSES)
    return Delivery.objects.get(pk=delivery.pk)


def test_the_list_filters_and_a_deliverys_attempts(
    live_server,
    browser_page,
    admin,
    hook,
    receiver,
):
    receiver.respond((503, {"X-Trace": "trace-1"}, b"busy, try later"), 200)
    retried = settled(webhook_ping_send(user=OPERATOR, installation=hook))
    receiver.respond(410)
    gone = settled(webhook_ping_send(user=OPERATOR, installation=hook))
    assert (retried.status, gone.status) == ("succeeded", "failed")

    page = browser_page
    sign_in(page, live_server, admin)
    page.goto(f"{live_server.url}/marketplace/orgs/acme/installations/{hook.pk}/")
    page.click("a:has-text('Delivery log')")
    page.wait_for_selector("h1:has-text('Deliveries')")
    assert page.locator(".delivery-log tbody tr").count() == 2
    page.screenshot(path=str(SHOTS / "delivery-list.png"), full_page=True)

    page.select_option("select[name=status]", "failed")
    page.click("button:has-text('Filter')")
    page.wait_for_url("**status=failed**")
    rows = page.locator(".delivery-log tbody tr")
    assert rows.count() == 1
    assert str(gone.event_uuid) in rows.inner_text() and "HTTP 410" in rows.inner_text()

    page.select_option("select[name=status]", "")
    page.fill("input[name=since]", (timezone.now() + timedelta(hours=1)).strftime("%Y-%m-%dT%H:%M"))
    page.click("button:has-text('Filter')")
    page.wait_for_selector(".empty-log")
    assert "No delivery matches these filters." in page.inner_text(".empty-log")

    page.goto(f"{log_url(live_server, hook)}?since=tomorrow")
    assert "since: Enter a date and time as YYYY-MM-DDTHH:MM (UTC)." in page.inner_text(
        ".filter-errors"
    )

    page.click("a:has-text('Clear')")
    page.click(f"a:has-text('{retried.event_uuid}')")
    page.wait_for_selector("h2:has-text('Attempts')")
    attempts = page.locator("article.attempt")
    assert attempts.count() == 2
    latest, first = attempts.nth(0).inner_text(), attempts.nth(1).inner_text()
    assert "Attempt 1.2" in latest and "HTTP 200" in latest
    assert "Attempt 1.1" in first and "HTTP 503" in first and "trace-1" in first
    assert "busy, try later" in first and "next attempt after" in first
    received = receiver.requests[0]
    assert received.headers["X-Service-Signature"] in first  # the signature sent
    assert json.loads(page.inner_text(".payload-pretty pre")) == json.loads(received.body)
    page.click("summary:has-text('Raw')")
    assert page.inner_text(".payload-raw pre") == received.body.decode()
    width = page.evaluate("document.documentElement.scrollWidth")
    assert width <= 1280, "the attempts fit the page"
    page.screenshot(path=str(SHOTS / "delivery-detail.png"), full_page=True)

    page.click("button:has-text('Redeliver')")
    page.wait_for_selector(".message.success")
    wait_until(lambda: len(receiver.requests) == 4)


def test_a_test_event_with_its_sample_payload(
    live_server,
    browser_page,
    admin,
    hook,
    receiver,
):
    page = browser_page
    sign_in(page, live_server, admin)
    page.goto(log_url(live_server, hook))
    page.select_option("select[name=event_type]", "space_content_updated")
    page.click("summary:has-text('Sample payload')")
    page.wait_for_selector(".sample-payload:has-text('revisionId')")  # no eval: the CSP
    sample = json.loads(page.inner_text(".sample-payload"))
    assert sample == {
        "type": "space_content_updated",
        "eventId": "(a new UUID for each delivery)",
        "installationId": hook.pk,
        "test": True,
        "spaceId": hook.space_id,
        "revisionId": "rEvIsIoN0sample00001",
    }

    page.click("button:has-text('Send test event')")
    page.wait_for_selector(".message.success")
    assert "Test space_content_updated sent" in page.inner_text(".message.success")
    (received,) = receiver.wait_for(1)
    payload = json.loads(received.body)
    assert payload["type"] == "space_content_updated"
    # The body is the preview's, with the delivery's own eventId.
    assert payload | {"eventId": sample["eventId"]} == sample
    assert uuid.UUID(payload["eventId"])
    # The delivery's page shows it as a test.
    page.wait_for_selector("h1 .badge.test-event")
    assert page.inner_text("h1 .badge.test-event") == "test"
    wait_until(lambda: Delivery.objects.filter(status="succeeded").count() == 1)
    page.wait_for_selector("article.attempt")  # the page follows the delivery: no reload
    assert "HTTP 200" in page.inner_text("article.attempt")


def test_resend_all_failed_shows_its_progress(
    live_server,
    browser_page,
    admin,
    hook,
    receiver,
):
    receiver.respond(410)
    failed = [webhook_ping_send(user=OPERATOR, installation=hook) for _ in range(6)]
    for delivery in failed:
        assert settled(delivery).status == "failed"
    receiver.respond((200, {}, b"", 0.2))  # slow enough to watch the progress
    receiver.requests.clear()

    page = browser_page
    sign_in(page, live_server, admin)
    page.goto(log_url(live_server, hook))
    page.fill(
        "input[name=resend-since]", (timezone.now() - timedelta(hours=1)).strftime("%Y-%m-%dT%H:%M")
    )
    page.click("button:has-text('Resend all failed')")
    page.wait_for_selector(".message.success")
    assert "Resending 6 failed deliveries" in page.inner_text(".message.success")
    # The page follows the task and what became of the deliveries, without a reload.
    page.wait_for_selector(".progress-detail:has-text('6 succeeded')", timeout=20_000)
    assert page.inner_text(".progress-text") == "Done: 6 of 6"
    assert page.get_attribute(".resend-progress progress", "max") == "6"
    page.screenshot(path=str(SHOTS / "delivery-resend.png"), full_page=True)
    assert len(receiver.requests) == 6
    assert {json.loads(r.body)["eventId"] for r in receiver.requests} == {
        str(d.event_uuid) for d in failed
    }


def test_the_disabled_endpoint_banner_and_re_enable(
    live_server,
    browser_page,
    admin,
    hook,
    receiver,
):
    reason = (
        "Every delivery attempt failed since 20 Nov 2026 10:00 UTC "
        "(31 attempts; the last: HTTP 503)"
    )
    endpoint_disable(installation=hook, reason=reason)

    page = browser_page
    sign_in(page, live_server, admin)
    page.goto(f"{live_server.url}/marketplace/orgs/acme/installations/")
    banner = page.locator(".endpoint-disabled")
    assert reason in banner.inner_text() and "Product guide" in banner.inner_text()
    page.screenshot(path=str(SHOTS / "delivery-banner.png"), full_page=True)
    page.goto(f"{live_server.url}/marketplace/orgs/acme/installations/{hook.pk}/")
    assert reason in page.inner_text(".endpoint-disabled")

    page.click(".endpoint-disabled button:has-text('Re-enable')")
    page.wait_for_selector(".message.success")
    assert page.url.endswith(f"/installations/{hook.pk}/")
    assert "The endpoint is enabled again" in page.inner_text(".message.success")
    assert page.locator(".endpoint-disabled").count() == 0
    assert not EndpointState.objects.get(pk=hook.pk).is_disabled

    page.click("button:has-text('Send test ping')")
    (ping,) = receiver.wait_for(1)
    assert json.loads(ping.body)["type"] == "ping"


def test_the_admins_attempt_table_fits_the_page(
    live_server,
    browser_page,
    hook,
    receiver,
):
    from django.contrib.auth import get_user_model

    receiver.respond((503, {"X-Long": "v" * 600}, b"x" * 1000), 200)
    delivery = settled(webhook_ping_send(user=OPERATOR, installation=hook))
    DeliveryAttempt.objects.filter(delivery=delivery).update(
        url="https://hooks.example.com/" + "a" * 400, error="e" * 450
    )
    get_user_model().objects.create_superuser("operator", password="operator-password")

    page = browser_page
    page.goto(f"{live_server.url}/admin/login/")
    page.fill("input[name=username]", "operator")
    page.fill("input[name=password]", "operator-password")
    page.click("input[type=submit]")
    page.goto(f"{live_server.url}/admin/docplatform/delivery/{delivery.pk}/change/")
    page.wait_for_selector(".delivery-attempts")
    assert "Deliveries" in page.inner_text("#nav-sidebar, .breadcrumbs")
    assert page.evaluate("document.documentElement.scrollWidth") <= 1280
    attempts = page.inner_text(".delivery-attempts")
    assert re.search(r"(?<![\d.])\d+\.\d s", attempts), "a delay to 0.1 s"
    assert not re.search(r"\d\.\d{2,}", attempts), "never 16 digits"
    page.screenshot(path=str(SHOTS / "admin-delivery.png"), full_page=True)
