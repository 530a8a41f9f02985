"""The delivery log of a webhook installation (Django test client): who sees it, the list's
filters and paging, bad filter values, a delivery's attempts, test events, "Resend all failed
since ...", the 24-hour chart and the disabled-endpoint banner."""

import html
import json
import re
from datetime import timedelta
from urllib.parse import parse_qsl

import pytest
from django.core.exceptions import ValidationError
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from docplatform.events.leases import Result, delivery_claim, delivery_redeliver, delivery_settle
from docplatform.events.models import Delivery
from integrations.models import Integration
from integrations.operators import OPERATOR
from integrations.services.installations import installation_create, installation_pause
from tests.conftest import wait_until
from tests.marketplace.conftest import messages_of, url
from webhooks.models import BulkRedelivery, DeliveryAttempt
from webhooks.services.drain import request_body
from webhooks.services.endpoints import endpoint_disable
from webhooks.services.ping import webhook_ping_send

pytestmark = pytest.mark.usefixtures("webhook_settings")


@pytest.fixture
def hook(org_admin, organization, acme_space, receiver):
    return installation_create(
        user=org_admin,
        integration=Integration.objects.get(name="webhook"),
        organization=organization,
        space=acme_space,
        configuration={"url": receiver.url, "space_content_updated": True},
    )


@pytest.fixture
def site_hook(org_admin, organization, acme_site, receiver):
    return installation_create(
        user=org_admin,
        integration=Integration.objects.get(name="webhook"),
        organization=organization,
        site=acme_site,
        configuration={"url": receiver.url, "page_feedback": True, "site_view": False},
    )


def finished(delivery, status, *, at=None):
    """Claim and settle a pending delivery as a worker would (no worker runs here)."""
    at = at or timezone.now()
    delivery = delivery_claim(delivery.pk)
    if status == "succeeded":
        delivery_settle(delivery, Result.succeeded(outcome="HTTP 200", attempts=1, at=at))
    else:
        delivery_settle(delivery, Result.failed(error="HTTP 500", outcome="HTTP 500", at=at))
    return delivery


def listed(response) -> list[int]:
    return [delivery.pk for delivery, _ in response.context["rows"]]


# --- Who sees it -------------------------------------------------------------------------------


def test_only_the_organizations_admins_see_the_log(
    admin_client, member_client, hook, globex_member, notifier, org_admin, organization
):
    assert admin_client.get(url("deliveries", hook)).status_code == 200
    assert member_client.get(url("deliveries", hook)).status_code == 403
    ping = webhook_ping_send(user=OPERATOR, installation=hook)
    assert member_client.get(url("delivery", hook, ping.pk)).status_code == 403
    assert member_client.post(url("delivery-resend", hook, ping.pk)).status_code == 403
    assert member_client.post(url("delivery-test-event", hook)).status_code == 403
    assert member_client.post(url("delivery-resend-failed", hook)).status_code == 403
    assert member_client.post(url("webhook-reenable", hook)).status_code == 403

    # Another organization's member: not even its organization's pages.
    outsider = Client()
    outsider.force_login(globex_member)
    assert outsider.get(url("deliveries", hook)).status_code == 404
    assert outsider.get(url("deliveries", hook, organization="globex")).status_code == 404

    # Another integration's installation has no delivery log.
    other = installation_create(user=org_admin, integration=notifier, organization=organization)
    assert admin_client.get(url("deliveries", other)).status_code == 404


def test_a_delivery_of_another_installation_is_404(admin_client, hook, site_hook):
    theirs = webhook_ping_send(user=OPERATOR, installation=site_hook)
    assert admin_client.get(url("delivery", hook, theirs.pk)).status_code == 404
    assert admin_client.post(url("delivery-resend", hook, theirs.pk)).status_code == 404
    assert admin_client.get(url("delivery", site_hook, theirs.pk)).status_code == 200
    assert admin_client.get(url("delivery", hook, 999999999)).status_code == 404


def test_the_installation_page_links_admins_to_the_log(admin_client, member_client, hook):
    ping = webhook_ping_send(user=OPERATOR, installation=hook)
    links = [f'href="{url("deliveries", hook)}"', f'href="{url("delivery", hook, ping.pk)}"']
    admin_page = admin_client.get(url("installation", hook)).content.decode()
    member_page = member_client.get(url("installation", hook)).content.decode()
    for link in links:
        assert link in admin_page and link not in member_page
    # The recent deliveries are the delivery log's latest rows: admins' too.
    assert str(ping.event_uuid) in admin_page and str(ping.event_uuid) not in member_page


# --- The list ----------------------------------------------------------------------------------


def test_filters_by_status_event_type_and_time(admin_client, hook, acme_space):
    from docplatform.revisions import space_content_update

    ok = finished(webhook_ping_send(user=OPERATOR, installation=hook), "succeeded")
    failed = finished(webhook_ping_send(user=OPERATOR, installation=hook), "failed")
    space_content_update(space=acme_space, pages=[{"path": "p", "title": "P", "body": "b"}])
    update = Delivery.objects.get(installation=hook, event__type="space_content_updated")
    old = webhook_ping_send(user=OPERATOR, installation=hook)
    Delivery.objects.filter(pk=old.pk).update(created_at=timezone.now() - timedelta(days=2))

    response = admin_client.get(url("deliveries", hook))
    assert listed(response) == [update.pk, failed.pk, ok.pk, old.pk]  # newest first
    page = response.content.decode()
    assert str(update.event_uuid) in page and "space_content_updated" in page

    yesterday = (timezone.now() - timedelta(days=1)).strftime("%Y-%m-%dT%H:%M")
    three_days_ago = (timezone.now() - timedelta(days=3)).strftime("%Y-%m-%dT%H:%M")
    for query, expected in [
        ({"status": "failed"}, [failed.pk]),
        ({"status": "succeeded"}, [ok.pk]),
        ({"status": "pending"}, [update.pk, old.pk]),
        ({"event": "space_content_updated"}, [update.pk]),
        ({"event": "ping", "status": "pending"}, [old.pk]),
        ({"since": yesterday}, [update.pk, failed.pk, ok.pk]),
        ({"since": three_days_ago, "until": yesterday}, [old.pk]),
        (
            {"status": "", "event": "", "since": "", "until": ""},
            [update.pk, failed.pk, ok.pk, old.pk],
        ),
    ]:
        response = admin_client.get(url("deliveries", hook), query)
        assert response.status_code == 200, query
        assert listed(response) == expected, query

    tomorrow = (timezone.now() + timedelta(days=1)).strftime("%Y-%m-%dT%H:%M")
    response = admin_client.get(url("deliveries", hook), {"since": tomorrow})
    assert listed(response) == []
    assert "No delivery matches these filters." in response.content.decode()


def test_each_row_shows_attempts_and_the_last_status_code(admin_client, hook):
    delivery = finished(webhook_ping_send(user=OPERATOR, installation=hook), "succeeded")
    Delivery.objects.filter(pk=delivery.pk).update(attempts=2)
    for number, code in [(1, 503), (2, 201)]:
        DeliveryAttempt.objects.create(
            delivery=delivery,
            number=number,
            started_at=timezone.now(),
            duration_ms=5,
            url=hook.configuration["url"],
            status_code=code,
            outcome="succeeded" if code == 201 else "retry",
        )
    page = admin_client.get(url("deliveries", hook)).content.decode()
    assert '<td class="last-code">HTTP 201</td>' in page
    assert '<td class="attempt-count">2</td>' in page


def pager_link(response, rel: str) -> dict | None:
    """The query of the page's Newer (``prev``) or Older (``next``) link, if it has one."""
    found = re.search(rf'href="\?([^"]*)" rel="{rel}"', response.content.decode())
    return dict(parse_qsl(html.unescape(found.group(1)))) if found else None


@pytest.mark.slow
def test_pages_of_25_by_cursor_keep_the_filters(admin_client, hook):
    deliveries = [
        finished(webhook_ping_send(user=OPERATOR, installation=hook), "failed") for _ in range(30)
    ]
    webhook_ping_send(user=OPERATOR, installation=hook)  # pending: filtered out
    # The oldest ten moved to one instant straddle the page break: the id orders them.
    tied = [d.pk for d in deliveries[:10]]
    instant = deliveries[0].created_at - timedelta(seconds=1)
    Delivery.objects.filter(pk__in=tied).update(created_at=instant)
    newest_first = [d.pk for d in reversed(deliveries[10:])] + sorted(tied, reverse=True)

    first = admin_client.get(url("deliveries", hook), {"status": "failed"})
    assert listed(first) == newest_first[:25]
    assert "deliveries</span>" not in first.content.decode()  # nothing counts the log
    assert pager_link(first, "prev") is None
    older = pager_link(first, "next")
    assert older["status"] == "failed" and older["cursor"]

    second = admin_client.get(url("deliveries", hook), older)
    assert listed(second) == newest_first[25:]
    assert pager_link(second, "next") is None
    newer = pager_link(second, "prev")
    assert newer["status"] == "failed"
    assert listed(admin_client.get(url("deliveries", hook), newer)) == newest_first[:25]
    # A cursor the log never gave: a 400 naming it, never an error page.
    refused = admin_client.get(url("deliveries", hook), {"cursor": "bm90IGEgY3Vyc29y"})
    assert refused.status_code == 400
    assert "<code>cursor</code>: not a cursor of this list" in refused.content.decode()


@pytest.mark.parametrize(
    "query, field, message",
    [
        ({"status": "gone"}, "status", "gone is not a status; one of pending, retrying"),
        ({"event": "space_view"}, "event", "space_view is not an event type of this log"),
        ({"since": "yesterday"}, "since", "Enter a date and time as YYYY-MM-DDTHH:MM (UTC)."),
        ({"until": "2026-13-40T99:99"}, "until", "Enter a date and time as YYYY-MM-DDTHH:MM"),
        (
            {"since": "2026-05-02T10:00", "until": "2026-05-01T10:00"},
            "until",
            "The end must be after the start.",
        ),
        ({"status": "x" * 5000}, "status", "is not a status"),
    ],
)
def test_bad_filter_values_say_which_field_and_why(admin_client, hook, query, field, message):
    webhook_ping_send(user=OPERATOR, installation=hook)
    response = admin_client.get(url("deliveries", hook), query)
    assert response.status_code == 400
    page = response.content.decode()
    assert f"<code>{field}</code>: " in page and message in page
    assert response.context["rows"] == []


# --- A delivery's page -------------------------------------------------------------------------


def test_the_delivery_page_shows_each_attempts_request_and_response(admin_client, hook):
    delivery = finished(webhook_ping_send(user=OPERATOR, installation=hook), "succeeded")
    signature = "t=1700000000,v1=" + "ab" * 32
    common = {
        "delivery": delivery,
        "started_at": timezone.now(),
        "url": hook.configuration["url"],
        "request_headers": {
            "Content-Type": "application/json",
            "X-Service-Signature": signature,
            "X-Service-Event": "ping",
        },
    }
    DeliveryAttempt.objects.create(
        **common,
        number=1,
        duration_ms=2003,
        status_code=503,
        outcome="retry",
        response_headers={"Retry-After": "5", "X-Trace": "trace-1"},
        response_body="<h1>down for maintenance</h1>",
        next_delay=1.0473829104,
    )
    DeliveryAttempt.objects.create(
        **common, number=2, duration_ms=15, error="connection reset by peer", outcome="failed"
    )

    response = admin_client.get(url("delivery", hook, delivery.pk))
    assert response.status_code == 200
    page = response.content.decode()
    body = request_body(delivery).decode()
    assert response.context["payload_raw"] == body
    assert json.loads(response.context["payload_pretty"]) == json.loads(body)
    assert f"&quot;eventId&quot;: &quot;{delivery.event_uuid}&quot;" in page  # pretty-printed
    assert signature in page
    assert "<th>X-Service-Event</th><td>ping</td>" in page
    assert "<th>Retry-After</th><td>5</td>" in page and "trace-1" in page
    assert "&lt;h1&gt;down for maintenance&lt;/h1&gt;" in page  # escaped, never markup
    assert "2003 ms" in page and "next attempt after 1.0 s" in page and "1.047" not in page
    assert "connection reset by peer" in page
    assert page.index("Attempt 1.2") < page.index("Attempt 1.1")  # the latest first
    assert f'action="{url("delivery-resend", hook, delivery.pk)}"' in page


def test_the_delivery_page_shows_a_standard_webhooks_signature_too(admin_client, hook):
    delivery = finished(webhook_ping_send(user=OPERATOR, installation=hook), "succeeded")
    signature = "v1,K5oZfzN95Z9UVu1EsfQmfVNQhnkZ2pj9o9NDN/H/pI4="
    service = "t=1700000000,v1=" + "ab" * 32
    DeliveryAttempt.objects.create(
        delivery=delivery,
        started_at=timezone.now(),
        url=hook.configuration["url"],
        request_headers={
            "webhook-id": str(delivery.event_uuid),
            "webhook-signature": signature,
            "X-Service-Signature": service,
        },
        number=1,
        duration_ms=12,
        status_code=204,
        outcome="succeeded",
    )
    page = admin_client.get(url("delivery", hook, delivery.pk)).content.decode()
    service_shown, standard_shown = (
        part.split("</p>", 1)[0] for part in page.split('class="signature"')[1:]
    )
    assert "<code>X-Service-Signature</code>" in service_shown and service in service_shown
    assert "<code>webhook-signature</code>" in standard_shown and signature in standard_shown


def test_an_attempt_without_recorded_headers_says_so(admin_client, hook):
    delivery = finished(webhook_ping_send(user=OPERATOR, installation=hook), "failed")
    DeliveryAttempt.objects.create(
        delivery=delivery,
        number=1,
        started_at=timezone.now(),
        duration_ms=1,
        url="",
        error="refused URL: not public",
        outcome="refused",
    )
    page = admin_client.get(url("delivery", hook, delivery.pk)).content.decode()
    assert "The headers of this attempt were not recorded." in page
    assert "refused URL: not public" in page


def test_redeliver_from_the_delivery_page(admin_client, hook):
    open_one = webhook_ping_send(user=OPERATOR, installation=hook)
    page = admin_client.get(url("delivery", hook, open_one.pk)).content.decode()
    assert url("delivery-resend", hook, open_one.pk) not in page
    response = admin_client.post(url("delivery-resend", hook, open_one.pk), follow=True)
    assert messages_of(response) == ["Not redelivered: the delivery is still in progress."]

    done = finished(webhook_ping_send(user=OPERATOR, installation=hook), "failed")
    response = admin_client.post(url("delivery-resend", hook, done.pk), follow=True)
    assert response.redirect_chain[-1][0] == url("delivery", hook, done.pk)
    assert messages_of(response) == [f"Delivery {done.pk} is on its way again."]
    done.refresh_from_db()
    assert (done.status, done.chain) == ("pending", 2)


# --- Test events -------------------------------------------------------------------------------


def test_test_event_types_are_those_the_installation_receives(admin_client, hook, site_hook):
    assert [
        t
        for t, _ in admin_client.get(url("deliveries", hook))
        .context["test_form"]
        .fields["event_type"]
        .choices
    ] == ["ping", "space_content_updated"]
    # page_feedback is switched on, site_view is not.
    choices = (
        admin_client.get(url("deliveries", site_hook))
        .context["test_form"]
        .fields["event_type"]
        .choices
    )
    assert [t for t, _ in choices] == ["ping", "page_feedback"]


@pytest.mark.parametrize(
    "event_type", ["site_view", "space_view", "installation_setup", "nope", ""]
)
def test_a_test_event_of_a_type_it_does_not_receive_is_refused(admin_client, site_hook, event_type):
    response = admin_client.post(
        url("delivery-test-event", site_hook), {"event_type": event_type}, follow=True
    )
    assert response.status_code == 200
    assert messages_of(response) == [
        f"No test event was sent: event_type {event_type!r} is not an event this installation "
        "receives; one of ping, page_feedback."
    ]
    assert not Delivery.objects.filter(installation=site_hook).exists()


def test_a_paused_installation_gets_no_test_event(admin_client, hook):
    installation_pause(user=OPERATOR, installation=hook)
    response = admin_client.post(
        url("delivery-test-event", hook), {"event_type": "space_content_updated"}, follow=True
    )
    assert messages_of(response) == ["No test event was sent: the installation is paused."]


def test_the_sample_payload_preview(admin_client, site_hook, acme_space, acme_site):
    response = admin_client.get(
        url("delivery-test-event-sample", site_hook), {"type": "page_feedback"}
    )
    assert response.status_code == 200
    sample = response.json()
    assert sample["siteId"] == acme_site.pk and sample["spaceId"] == acme_space.pk
    # As the body has them, a test event's "test": true included.
    assert list(sample)[:4] == ["type", "eventId", "installationId", "test"]
    assert sample["type"] == "page_feedback" and sample["installationId"] == site_hook.pk
    assert sample["test"] is True
    assert set(sample) - {"type", "eventId", "installationId", "test"} == {
        "siteId",
        "spaceId",
        "pageId",
        "feedback",
        "visitor",
        "url",
        "referrer",
    }
    response = admin_client.get(url("delivery-test-event-sample", site_hook), {"type": "site_view"})
    assert response.status_code == 400
    assert response.json() == {
        "type": [
            "event_type 'site_view' is not an event this installation receives; "
            "one of ping, page_feedback"
        ]
    }


@pytest.mark.slow
@pytest.mark.usefixtures("celery_worker")
def test_a_test_event_reaches_this_installation_alone(
    admin_client, hook, org_admin, organization, acme_space, receiver, notifier
):
    # Another integration in the same space, receiving space_content_updated for real.
    other = installation_create(
        user=org_admin, integration=notifier, organization=organization, space=acme_space
    )
    response = admin_client.post(
        url("delivery-test-event", hook), {"event_type": "space_content_updated"}, follow=True
    )
    delivery = Delivery.objects.get(installation=hook, event__type="space_content_updated")
    assert response.redirect_chain[-1][0] == url("delivery", hook, delivery.pk)
    assert messages_of(response) == [
        f"Test space_content_updated sent (eventId {delivery.event_uuid})."
    ]
    (received,) = receiver.wait_for(1)
    payload = json.loads(received.body)
    assert payload == {
        "type": "space_content_updated",
        "eventId": str(delivery.event_uuid),
        "installationId": hook.pk,
        "test": True,
        "spaceId": acme_space.pk,
        "revisionId": "rEvIsIoN0sample00001",
    }
    assert received.body == request_body(delivery)
    wait_until(lambda: Delivery.objects.get(pk=delivery.pk).status == "succeeded")
    assert not Delivery.objects.filter(
        installation=other, event__type="space_content_updated"
    ).exists()


# --- Resend all failed -------------------------------------------------------------------------


def test_resend_failed_needs_a_valid_time_and_failed_deliveries(admin_client, hook):
    for data, message in [
        (
            {},
            "Nothing was resent: since: Give the time since when failed deliveries are sent again.",
        ),
        (
            {"resend-since": "last week"},
            "Nothing was resent: since: Enter a date and time as YYYY-MM-DDTHH:MM (UTC).",
        ),
        ({"resend-since": "2999-01-01T00:00"}, "Nothing was resent: the time is in the future."),
        (
            {"resend-since": "2020-01-01T00:00"},
            "Nothing was resent: no delivery failed since 01 Jan 2020 00:00 UTC.",
        ),
    ]:
        response = admin_client.post(url("delivery-resend-failed", hook), data, follow=True)
        assert response.status_code == 200
        assert messages_of(response) == [message], data
    assert not BulkRedelivery.objects.exists()


def test_resend_failed_is_bounded_and_refuses_a_second_while_one_runs(
    admin_client, hook, settings, django_capture_on_commit_callbacks
):
    settings.WEBHOOK_BULK_REDELIVERY_LIMIT = 3
    long_ago = timezone.now() - timedelta(days=2)
    old_failure = finished(
        webhook_ping_send(user=OPERATOR, installation=hook), "failed", at=long_ago
    )
    failures = [
        finished(webhook_ping_send(user=OPERATOR, installation=hook), "failed") for _ in range(4)
    ]
    finished(webhook_ping_send(user=OPERATOR, installation=hook), "succeeded")
    since = (timezone.now() - timedelta(hours=1)).strftime("%Y-%m-%dT%H:%M")

    with django_capture_on_commit_callbacks() as callbacks:  # the task is not run here
        response = admin_client.post(
            url("delivery-resend-failed", hook), {"resend-since": since}, follow=True
        )
    assert len(callbacks) == 1
    assert messages_of(response) == [
        "Resending 3 failed deliveries, the oldest first (at most 3 at a time)."
    ]
    job = BulkRedelivery.objects.get()
    assert job.delivery_ids == [d.pk for d in failures[:3]]  # the oldest first, no old one
    assert old_failure.pk not in job.delivery_ids
    page = admin_client.get(url("deliveries", hook)).content.decode()
    assert "Resending: 0 of 3 done" in page

    response = admin_client.post(
        url("delivery-resend-failed", hook), {"resend-since": since}, follow=True
    )
    assert messages_of(response) == ["Nothing was resent: a resend is in progress (0 of 3 done)."]


@pytest.mark.usefixtures("celery_worker")
def test_resend_failed_sends_them_again_and_shows_progress(admin_client, hook, receiver):
    receiver.respond(410)  # fails at once, no retry
    failures = [webhook_ping_send(user=OPERATOR, installation=hook) for _ in range(5)]
    ids = [f.pk for f in failures]
    wait_until(lambda: Delivery.objects.filter(pk__in=ids, status="failed").count() == 5)
    receiver.respond(200)
    receiver.requests.clear()
    since = (timezone.now() - timedelta(minutes=5)).strftime("%Y-%m-%dT%H:%M")
    admin_client.post(url("delivery-resend-failed", hook), {"resend-since": since})
    receiver.wait_for(5)
    wait_until(
        lambda: all(
            d.status == "succeeded"
            for d in Delivery.objects.filter(pk__in=[f.pk for f in failures])
        )
    )
    progress = admin_client.get(url("delivery-resend-progress", hook)).json()
    assert {
        k: progress[k]
        for k in ("total", "done", "skipped", "finished", "succeeded", "failed", "open")
    } == {
        "total": 5,
        "done": 5,
        "skipped": 0,
        "finished": True,
        "succeeded": 5,
        "failed": 0,
        "open": 0,
    }
    sent = {json.loads(r.body)["eventId"] for r in receiver.requests}
    assert sent == {str(d.event_uuid) for d in failures}  # the same eventIds
    assert "Done: 5 of 5" in admin_client.get(url("deliveries", hook)).content.decode()


def test_the_progress_of_no_resend_is_404(admin_client, hook):
    assert admin_client.get(url("delivery-resend-progress", hook)).status_code == 404


# --- The chart ---------------------------------------------------------------------------------


def test_the_chart_counts_succeeded_and_failed_per_hour(admin_client, hook):
    now = timezone.now()
    for hours_ago, status, count in [
        (0, "succeeded", 3),
        (0, "failed", 1),
        (5, "failed", 2),
        (30, "succeeded", 4),
    ]:
        for _ in range(count):
            finished(
                webhook_ping_send(user=OPERATOR, installation=hook),
                status,
                at=now - timedelta(hours=hours_ago),
            )
    webhook_ping_send(user=OPERATOR, installation=hook)  # still open: not counted

    chart = admin_client.get(url("deliveries", hook)).context["chart"]
    bars = chart["bars"]
    assert len(bars) == 24
    assert (bars[-1]["succeeded"], bars[-1]["failed"]) == (3, 1)
    assert (bars[-6]["succeeded"], bars[-6]["failed"]) == (0, 2)
    assert sum(b["succeeded"] for b in bars) == 3 and sum(b["failed"] for b in bars) == 3
    assert (chart["succeeded"], chart["failed"], chart["peak"]) == (3, 3, 4)
    assert bars[-1]["ok_height"] == 90 and bars[-1]["failed_height"] == 30  # of 120
    page = admin_client.get(url("deliveries", hook)).content.decode()
    assert "3 succeeded, 1 failed</title>" in page


# --- A disabled endpoint -----------------------------------------------------------------------


def test_admins_see_the_disabled_endpoint_banner_and_re_enable_it(
    admin_client, member_client, hook, org_admin
):
    reason = (
        "Every delivery attempt failed since 20 Nov 2026 10:00 UTC "
        "(12 attempts; the last: HTTP 503)"
    )
    endpoint_disable(installation=hook, reason=reason)
    for page_url in (
        url("installation", hook),
        reverse("marketplace:installations", args=["acme"]),
        url("deliveries", hook),
    ):
        page = admin_client.get(page_url).content.decode()
        assert "Webhook endpoint disabled" in page and reason in page, page_url
        assert f'action="{url("webhook-reenable", hook)}"' in page
        assert "Webhook endpoint disabled" not in member_client.get(page_url).content.decode()

    response = admin_client.post(
        url("webhook-reenable", hook),
        {"next": reverse("marketplace:installations", args=["acme"])},
        follow=True,
    )
    assert response.redirect_chain[-1][0] == reverse("marketplace:installations", args=["acme"])
    assert messages_of(response) == [
        "The endpoint is enabled again: new events are delivered to it."
    ]
    assert "Webhook endpoint disabled" not in response.content.decode()
    hook.webhook_endpoint.refresh_from_db()
    assert hook.webhook_endpoint.reenabled_by == org_admin

    response = admin_client.post(
        url("webhook-reenable", hook), {"next": "https://evil.example/"}, follow=True
    )
    assert response.redirect_chain[-1][0] == url("installation", hook)  # never off-site
    assert messages_of(response) == ["Not re-enabled: the endpoint is not disabled."]


def test_a_disabled_endpoint_gets_no_test_event_nor_resend(admin_client, hook):
    finished(webhook_ping_send(user=OPERATOR, installation=hook), "failed")
    endpoint_disable(installation=hook, reason="failing")
    response = admin_client.post(
        url("delivery-test-event", hook), {"event_type": "ping"}, follow=True
    )
    assert messages_of(response) == [
        "No test event was sent: the endpoint is disabled after failing every attempt: "
        "re-enable it first."
    ]
    since = (timezone.now() - timedelta(hours=1)).strftime("%Y-%m-%dT%H:%M")
    response = admin_client.post(
        url("delivery-resend-failed", hook), {"resend-since": since}, follow=True
    )
    assert messages_of(response)[0].startswith("Nothing was resent: the endpoint is disabled")


@pytest.mark.slow
def test_a_member_refused_the_delivery_log_gets_a_page_that_says_why_and_links_back(
    member_client, hook
):
    response = member_client.get(url("deliveries", hook))
    assert response.status_code == 403
    page = response.content.decode()
    assert "You cannot open this page" in page
    assert "Only the organization&#x27;s admins may read delivery and integration logs." in page
    assert 'href="/marketplace/"' in page


def test_an_unknown_address_gets_a_page_that_links_back(member_client):
    response = member_client.get("/marketplace/no-such-page/")
    assert response.status_code == 404
    page = response.content.decode()
    assert "Nothing is here" in page and 'href="/marketplace/"' in page


def test_a_delivery_settled_without_an_attempt_is_not_offered_again(admin_client, hook):
    """Nothing was sent (the integration had nothing to run): a redelivery would settle it the
    same way, so neither page offers it and the service refuses it, saying why."""
    delivery = webhook_ping_send(user=OPERATOR, installation=hook)
    Delivery.objects.filter(pk=delivery.pk).update(
        status="succeeded", attempts=0, outcome="the integration has no script: nothing to run"
    )
    delivery.refresh_from_db()
    page = admin_client.get(url("delivery", hook, delivery.pk)).content.decode()
    assert "Not redeliverable: nothing was sent" in page and 'redeliver">Redeliver' not in page
    installation_page = admin_client.get(
        reverse("marketplace:installation", args=["acme", hook.pk])
    ).content.decode()
    assert "Redeliver</button>" not in installation_page
    with pytest.raises(ValidationError) as refused:
        delivery_redeliver(delivery)
    assert refused.value.message_dict == {
        "status": [
            "nothing was sent, so there is nothing to send again (the integration has no "
            "script: nothing to run)"
        ]
    }


def test_the_installation_page_counts_attempts_as_the_log_does_and_says_why_one_failed(
    admin_client, hook
):
    delivery = webhook_ping_send(user=OPERATOR, installation=hook)
    Delivery.objects.filter(pk=delivery.pk).update(
        status="failed", attempts=1, chain=2, last_error="HTTP 410 Gone: the receiver refused it"
    )
    page = admin_client.get(
        reverse("marketplace:installation", args=["acme", hook.pk])
    ).content.decode()
    assert '1 <span class="muted small">(resent 1\u00d7)</span>' in page
    assert "HTTP 410 Gone: the receiver refused it" in page
    log = admin_client.get(url("deliveries", hook)).content.decode()
    assert (
        '<td class="attempt-count">1 <span class="muted small">(resent 1\u00d7)</span></td>' in log
    )
