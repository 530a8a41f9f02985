"""Webhook deliveries through a real Celery worker to a real local HTTP receiver."""

import json
from datetime import timedelta

import pytest
import stripe
from docplatform_sdk.receiver import verify_signature

from docplatform.events import Visitor
from docplatform.events.leases import delivery_redeliver
from docplatform.events.models import Delivery
from docplatform.revisions import space_content_update
from docplatform.services import page_feedback_record, site_view_record
from integrations.operators import OPERATOR
from integrations.services.installations import installation_pause
from tests.conftest import wait_until
from tests.factories import PageFactory, SpaceFactory
from webhooks.models import DeliveryAttempt, SigningSecret
from webhooks.services.ping import webhook_ping
from webhooks.services.signing_secrets import (
    signing_secret_current,
    signing_secret_rotate,
    signing_secrets_for,
)

pytestmark = pytest.mark.usefixtures("webhook_settings", "celery_worker")

VISITOR = Visitor(anonymous_id="a1", user_agent="UA/1", ip="198.51.100.4", cookies={"k": "v"})


def update(space):
    return space_content_update(space=space, pages=[{"path": "p", "title": "P", "body": "b"}])


def finished(delivery_filter=None):
    deliveries = Delivery.objects.filter(consumer="webhook", **(delivery_filter or {}))

    def check():
        return deliveries.exists() and not deliveries.filter(status__in=["pending", "retrying"])

    wait_until(check)
    return list(deliveries.order_by("id"))


@pytest.mark.slow
def test_a_content_update_is_delivered_signed_with_the_specification_payload(
    receiver, install_webhook, space
):
    installation = install_webhook(space=space, url=receiver.url)
    assert installation.status == "active"
    revision = update(space)
    (received,) = receiver.wait_for(1)
    (delivery,) = finished()

    assert received.path == "/hooks"
    assert json.loads(received.body) == {
        "type": "space_content_updated",
        "eventId": str(delivery.event_uuid),
        "installationId": installation.id,
        "spaceId": space.id,
        "revisionId": revision.id,
    }
    headers = received.headers
    assert headers["Content-Type"] == "application/json"
    assert headers["X-Service-Event"] == "space_content_updated"
    assert headers["X-Service-Delivery"] == str(delivery.event_uuid)
    assert headers["User-Agent"].startswith("docplatform-webhooks/")
    secret = signing_secret_current(installation)
    assert secret.startswith("whsec_")
    header = headers["X-Service-Signature"]
    assert verify_signature(received.body, header, secret) > 0
    # An independent verifier of the same scheme (Stripe's) accepts it too.
    assert stripe.WebhookSignature.verify_header(received.body.decode(), header, secret, 300)
    assert delivery.status == "succeeded" and delivery.attempts == 1


@pytest.mark.slow
def test_site_events_follow_the_selected_event_types(receiver, install_webhook, site, space):
    install_webhook(site=site, url=receiver.url, site_view=False, page_feedback=True)
    page = PageFactory(revision=space.current_revision, path="intro", title="Intro")
    site_view_record(site=site, visitor=VISITOR, url="https://d.test/intro", referrer="")
    page_feedback_record(
        site=site,
        page=page,
        rating="bad",
        comment="Too short",
        visitor=VISITOR,
        url="https://d.test/intro",
        referrer="https://search.test/",
    )
    (received,) = receiver.wait_for(1)
    body = json.loads(received.body)
    assert body["type"] == "page_feedback"
    assert body["feedback"] == {"rating": "bad", "comment": "Too short"}
    assert body["visitor"] == {
        "anonymousId": "a1",
        "userAgent": "UA/1",
        "ip": "198.51.100.4",
        "cookies": {"k": "v"},
    }
    assert {body["siteId"], body["spaceId"], body["pageId"]} == {site.id, space.id, page.id}
    assert body["referrer"] == "https://search.test/"
    assert Delivery.objects.filter(event__type="site_view").count() == 0


@pytest.mark.slow
@pytest.mark.parametrize(
    ("responses", "status", "attempts"),
    [
        ([204], "succeeded", 1),
        ([400], "failed", 1),
        ([404], "failed", 1),
        ([410], "failed", 1),
        ([(301, {"Location": "/elsewhere"}, b"")], "failed", 1),
        ([429], "failed", 4),
        ([500], "failed", 4),
        ([503, 502, 200], "succeeded", 3),
        ([(429, {"Retry-After": "0"}, b""), 200], "succeeded", 2),
    ],
)
def test_each_response_class_has_its_outcome(
    receiver, install_webhook, space, responses, status, attempts
):
    receiver.respond(*responses)
    install_webhook(space=space, url=receiver.url)
    update(space)
    (delivery,) = finished()
    assert (delivery.status, delivery.attempts) == (status, attempts)
    assert len(receiver.requests) == attempts
    assert all(r.path == "/hooks" for r in receiver.requests)  # redirects are not followed
    bodies = {r.body for r in receiver.requests}
    assert len(bodies) == 1  # byte-identical on every attempt


@pytest.mark.slow
def test_network_errors_and_timeouts_are_retried(receiver, install_webhook, space, settings):
    settings.WEBHOOK_RESPONSE_TIMEOUT = 0.3
    receiver.respond((200, {}, b"", 1.0), (200, {}, b"", 0.0))
    install_webhook(space=space, url=receiver.url)
    update(space)
    (delivery,) = finished()
    assert (delivery.status, delivery.attempts) == ("succeeded", 2)
    first, second = DeliveryAttempt.objects.filter(delivery=delivery).order_by("number")
    assert first.error.startswith("timeout") and first.status_code is None
    assert first.next_delay is not None
    assert second.status_code == 200

    closed = receiver.url.replace(str(receiver.server.server_port), "9")  # nothing listens
    install_webhook(space=space.__class__.objects.create(
        organization=space.organization, title="Other"), url=closed)  # fmt: skip
    update(space.__class__.objects.get(title="Other"))
    deliveries = finished({"status__in": ["failed", "succeeded", "pending", "retrying"]})
    refused = deliveries[-1]
    assert (refused.status, refused.attempts) == ("failed", 4)
    assert "network error" in refused.last_error


@pytest.mark.slow
def test_the_attempt_log_records_each_attempt(receiver, install_webhook, space):
    receiver.respond(
        (500, {"X-Trace": "t1"}, b"x" * 5000), (200, {"Content-Type": "text/plain"}, b"thanks")
    )
    install_webhook(space=space, url=receiver.url)
    update(space)
    (delivery,) = finished()
    first, second = DeliveryAttempt.objects.filter(delivery=delivery).order_by("number")
    assert (first.number, first.status_code, first.outcome) == (1, 500, "retry")
    assert first.response_headers["X-Trace"] == "t1"
    assert first.response_body == "x" * 1024
    assert 0.045 <= first.next_delay <= 0.055
    assert (second.number, second.status_code, second.outcome) == (2, 200, "succeeded")
    assert second.response_body == "thanks"
    assert second.next_delay is None
    assert first.duration_ms >= 0 and first.url == receiver.url


def test_redelivery_keeps_the_event_id_and_the_body(receiver, install_webhook, space):
    install_webhook(space=space, url=receiver.url)
    update(space)
    (delivery,) = finished()
    delivery_redeliver(delivery)
    first, second = receiver.wait_for(2)
    wait_until(lambda: Delivery.objects.get(pk=delivery.pk).status == "succeeded")
    assert first.body == second.body
    assert first.headers["X-Service-Delivery"] == second.headers["X-Service-Delivery"]
    chains = list(DeliveryAttempt.objects.filter(delivery=delivery).values_list("chain", "number"))
    assert chains == [(1, 1), (2, 1)]


def test_a_rotated_secret_signs_alongside_the_old_one_for_a_day(receiver, install_webhook, space):
    installation = install_webhook(space=space, url=receiver.url)
    old = signing_secret_current(installation)
    new = signing_secret_rotate(installation)
    assert new != old and signing_secret_current(installation) == new
    update(space)
    (received,) = receiver.wait_for(1)
    header = received.headers["X-Service-Signature"]
    assert header.count("v1=") == 2
    verify_signature(received.body, header, new)
    verify_signature(received.body, header, old)

    from django.utils import timezone

    SigningSecret.objects.filter(expires_at__isnull=False).update(expires_at=timezone.now())
    update(space)
    _, later = receiver.wait_for(2)
    assert later.headers["X-Service-Signature"].count("v1=") == 1
    verify_signature(later.body, later.headers["X-Service-Signature"], new)


@pytest.mark.slow
def test_the_secrets_that_sign_are_read_in_one_query(receiver, install_webhook, space):
    """The current secret (no expiry), then those in their overlap, the expired ones left
    out: one query for a batch's installations, compiled once."""
    from django.db import connection
    from django.test.utils import CaptureQueriesContext
    from django.utils import timezone

    first = install_webhook(space=space, url=receiver.url)
    second = install_webhook(space=SpaceFactory(organization=space.organization), url=receiver.url)
    old = signing_secret_current(first)
    new = signing_secret_rotate(first)
    signing_secret_rotate(second)
    newest = signing_secret_rotate(second)
    overlapping = SigningSecret.objects.filter(installation=second, expires_at__isnull=False)
    ended = timezone.now() - timedelta(seconds=1)
    assert overlapping.update(expires_at=ended) == 1  # its overlap is over
    with CaptureQueriesContext(connection) as queries:
        secrets = signing_secrets_for([first, second])
    assert secrets == {first.pk: [new, old], second.pk: [newest]}
    assert len(queries.captured_queries) == 1


@pytest.mark.slow
def test_pausing_cancels_a_delivery_waiting_for_its_retry(
    receiver, install_webhook, space, settings
):
    settings.WEBHOOK_RETRY_BASE_DELAY = 1.0
    receiver.respond(500)
    installation = install_webhook(space=space, url=receiver.url)
    update(space)
    receiver.wait_for(1)
    wait_until(lambda: Delivery.objects.filter(status="retrying").exists())
    installation_pause(user=OPERATOR, installation=installation)
    (delivery,) = finished()
    assert delivery.status == "cancelled"
    assert len(receiver.requests) == 1


@pytest.mark.slow
def test_a_test_ping(receiver, install_webhook, space):
    installation = install_webhook(space=space, url=receiver.url)
    webhook_ping(installation=installation)
    (received,) = receiver.wait_for(1)
    body = json.loads(received.body)
    assert set(body) == {"type", "eventId", "installationId"}
    assert body["type"] == "ping" and body["installationId"] == installation.id


def test_a_url_no_longer_allowed_fails_at_send_time(receiver, install_webhook, space, settings):
    install_webhook(space=space, url=receiver.url)
    settings.WEBHOOK_ALLOWED_NETWORKS = []
    update(space)
    (delivery,) = finished()
    assert delivery.status == "failed" and delivery.attempts == 1
    assert (
        "refused URL: 127.0.0.1 resolves to 127.0.0.1, a loopback address (an operator may "
        "allow its network with WEBHOOK_ALLOWED_NETWORKS)" in delivery.last_error
    )
    assert receiver.requests == []


@pytest.mark.slow
def test_a_dead_limits_store_holds_deliveries_back_until_it_answers(
    receiver, install_webhook, space, settings
):
    settings.WEBHOOK_LIMITS_URL = "redis://127.0.0.1:1/0"  # nothing listens there
    installation = install_webhook(space=space, url=receiver.url)
    update(space)
    held = Delivery.objects.filter(
        installation=installation, last_error="held back: the endpoint limits could not be checked"
    )
    wait_until(held.exists)
    assert receiver.requests == []  # never sent past limits it could not check
    assert held.get().status == "pending" and held.get().attempts == 0  # postponed, not failed

    settings.WEBHOOK_LIMITS_URL = "database"  # the store answers again
    receiver.wait_for(1)
    (delivery,) = finished()
    assert delivery.status == "succeeded" and delivery.attempts == 1
