"""Slow and hostile receivers hold up nothing but their own deliveries: every attempt ends by
its deadline whatever the receiver does, each delivery is settled as its attempt ends, and a
receiver gets a bounded number of POSTs in flight (the rest waits, it does not fail).

Real servers on real sockets (``slow_servers``). Most tests run the drain here, where a
worker would (on a broker of their own, so no worker takes it); one goes through the suite's
real Celery worker.
"""

import threading
import time

import pytest
from django.db import transaction
from django.utils import timezone

from docplatform import settings as project_settings
from docplatform.events.models import Delivery
from docplatform.models import Revision
from docplatform.revisions import space_content_update
from tests.conftest import wait_until
from tests.factories import SpaceFactory
from webhooks.models import DeliveryAttempt
from webhooks.services.delivery import webhook_deliver, webhook_deliver_due
from webhooks.transport.receivers import slots

from . import slow_servers

slow_server = slow_servers.slow_server  # the fixtures
unconnectable = slow_servers.unconnectable
tls_dripper = slow_servers.tls_dripper

DRAIN = "webhooks.tasks.deliver_due"
RETRY = "webhooks.tasks.deliver"


def update(space):
    space_content_update(space=space, pages=[{"path": "p", "title": "P"}])


@pytest.fixture
def hooked(organization, install_webhook):
    """A new space whose webhook installation posts to ``url``."""

    def make(url: str):
        space = SpaceFactory(organization=organization)
        space.current_revision = Revision.objects.create(space=space, message="first")
        space.save()
        installation = install_webhook(space=space, url=url, space_content_updated=True)
        return space, installation

    return make


def attempt_of(installation) -> DeliveryAttempt:
    (attempt,) = DeliveryAttempt.objects.filter(delivery__installation=installation)
    return attempt


@pytest.mark.usefixtures("transactional_db", "private_broker")
class TestEveryAttemptEndsByItsDeadline:
    @pytest.fixture(autouse=True)
    def short_deadlines(self, webhook_settings):
        webhook_settings.WEBHOOK_RESPONSE_TIMEOUT = 1.0
        webhook_settings.WEBHOOK_CONNECT_TIMEOUT = 0.5
        webhook_settings.WEBHOOK_RETRY_BASE_DELAY = 30.0  # retries stay queued

    @pytest.mark.slow
    def test_headers_dripped_a_line_at_a_time_are_cut_at_the_deadline(self, slow_server, hooked):
        slow_server.interval = 0.1  # a header line every 0.1 s: 30 s for all of them
        space, installation = hooked(slow_server.url("/drip-headers"))
        update(space)
        started = time.monotonic()
        assert webhook_deliver_due() == 1
        assert time.monotonic() - started < 1.6
        attempt = attempt_of(installation)
        assert attempt.error == "timeout: no answer within 1 s"
        assert attempt.status_code is None and 1000 <= attempt.duration_ms < 1500
        assert (attempt.outcome, attempt.number) == ("retry", 1)
        delivery = Delivery.objects.get(installation=installation)
        assert (delivery.status, delivery.attempts) == ("retrying", 1)
        (request,) = slow_server.to("/drip-headers")
        wait_until(lambda: request.ended is not None, timeout=2)  # we hung up on it
        assert request.ended - request.started < 1.6

    @pytest.mark.slow
    def test_a_body_dripped_a_byte_at_a_time_is_cut_at_the_deadline(self, slow_server, hooked):
        slow_server.interval = 0.05
        space, installation = hooked(slow_server.url("/drip-body"))
        update(space)
        started = time.monotonic()
        assert webhook_deliver_due() == 1
        assert time.monotonic() - started < 1.6
        attempt = attempt_of(installation)
        # The status came in time, so the receiver took the delivery; its body was cut.
        assert (attempt.status_code, attempt.outcome) == (200, "succeeded")
        assert 1000 <= attempt.duration_ms < 1500
        assert attempt.response_body == ""

    @pytest.mark.slow
    def test_a_receiver_that_never_answers_is_cut_at_the_deadline(self, slow_server, hooked):
        space, installation = hooked(slow_server.url("/hang"))
        update(space)
        assert webhook_deliver_due() == 1
        attempt = attempt_of(installation)
        assert attempt.error == "timeout: no answer within 1 s"
        assert 1000 <= attempt.duration_ms < 1500

    @pytest.mark.slow
    def test_a_tls_handshake_dripped_a_byte_at_a_time_is_cut_at_the_connect_timeout(
        self, tls_dripper, hooked
    ):
        # Python's ssl bounds the whole handshake by the socket's timeout (the connect
        # timeout here), not each read.
        space, installation = hooked(tls_dripper)
        update(space)
        assert webhook_deliver_due() == 1
        attempt = attempt_of(installation)
        assert attempt.error.startswith("timeout:")
        assert 500 <= attempt.duration_ms < 900

    @pytest.mark.slow
    def test_a_connection_that_never_completes_is_cut_at_the_connect_timeout(
        self, unconnectable, hooked
    ):
        space, installation = hooked(unconnectable)
        update(space)
        assert webhook_deliver_due() == 1
        attempt = attempt_of(installation)
        assert attempt.error == "timeout: no connection within 0.5 s"
        assert 500 <= attempt.duration_ms < 900


@pytest.mark.slow
@pytest.mark.usefixtures("transactional_db", "private_broker")
def test_the_real_deadlines_3_s_to_connect_and_10_s_in_all(
    slow_server, unconnectable, hooked, webhook_settings
):
    for name in ("WEBHOOK_CONNECT_TIMEOUT", "WEBHOOK_RESPONSE_TIMEOUT"):
        setattr(webhook_settings, name, getattr(project_settings, name))
    assert (
        webhook_settings.WEBHOOK_CONNECT_TIMEOUT,
        webhook_settings.WEBHOOK_RESPONSE_TIMEOUT,
    ) == (
        3.0,
        10.0,
    )
    webhook_settings.WEBHOOK_RETRY_BASE_DELAY = 30.0
    slow_server.interval = 1.0  # a header line a second, for 300 s
    dripping, dripped_to = hooked(slow_server.url("/drip-headers"))
    closed, closed_to = hooked(unconnectable)
    with transaction.atomic():
        update(dripping)
        update(closed)
    started = time.monotonic()
    assert webhook_deliver_due() == 2
    assert time.monotonic() - started < 11
    drip = attempt_of(dripped_to)
    assert drip.error == "timeout: no answer within 10 s"
    assert 10_000 <= drip.duration_ms < 10_800
    connect = attempt_of(closed_to)
    assert connect.error == "timeout: no connection within 3 s"
    assert 3_000 <= connect.duration_ms < 3_800


@pytest.mark.slow
def test_a_healthy_receiver_is_not_held_up_by_a_60_s_receiver(
    celery_worker, slow_server, receiver, hooked, webhook_settings
):
    """Through the real worker: the healthy delivery fired in the same transaction as one to a
    receiver that takes 60 s arrives within a second, is settled while the slow attempt is
    still open, and so is a delivery fired while it is."""
    webhook_settings.WEBHOOK_RESPONSE_TIMEOUT = 10.0
    slow_server.delay = 60.0
    slow, slow_installation = hooked(slow_server.url("/slow"))
    healthy, healthy_installation = hooked(receiver.url)
    with transaction.atomic():
        update(slow)
        update(healthy)
    committed = time.monotonic()
    (first,) = receiver.wait_for(1, timeout=5)
    assert first.at - committed < 1.0
    wait_until(
        lambda: Delivery.objects.filter(
            installation=healthy_installation, status="succeeded"
        ).exists(),
        timeout=1.0,
    )
    assert len(slow_server.to("/slow")) == 1

    update(healthy)  # while the slow attempt is still open
    committed = time.monotonic()
    _, second = receiver.wait_for(2, timeout=5)
    assert second.at - committed < 1.0
    (request,) = slow_server.to("/slow")
    assert request.ended is None  # still waiting for its answer
    slow_delivery = Delivery.objects.get(installation=slow_installation)
    assert (slow_delivery.status, slow_delivery.attempts) == ("pending", 0)
    healthy_deliveries = Delivery.objects.filter(installation=healthy_installation)
    wait_until(
        lambda: set(healthy_deliveries.values_list("status", flat=True)) == {"succeeded"},
        timeout=1.0,
    )
    slow_server.stop()  # the slow receiver hangs up and is gone: its delivery fails soon
    wait_until(lambda: not Delivery.objects.filter(status__in=Delivery.OPEN_STATUSES).exists())


@pytest.mark.slow
@pytest.mark.usefixtures("transactional_db", "private_broker")
def test_a_burst_to_one_slow_receiver_takes_only_its_bound_of_senders(
    slow_server, receiver, hooked, webhook_settings
):
    webhook_settings.WEBHOOK_RECEIVER_CONCURRENCY = 2
    slow_server.delay = 0.4
    burst = [hooked(slow_server.url("/slow")) for _ in range(6)]
    healthy, _ = hooked(receiver.url)
    with transaction.atomic():
        for space, _ in burst:
            update(space)  # claimed first
        update(healthy)

    started = time.monotonic()
    assert webhook_deliver_due() == 7
    (received,) = receiver.requests
    assert received.at - started < 0.3  # not behind the burst
    assert slow_server.most_open["/slow"] == 2  # never more than its bound at once
    assert len(slow_server.to("/slow")) == 6  # each once: waiting is not an attempt
    # Postponed, not failed: every delivery succeeded at its first attempt.
    assert set(Delivery.objects.values_list("status", "attempts")) == {("succeeded", 1)}
    assert DeliveryAttempt.objects.count() == 7
    assert set(DeliveryAttempt.objects.values_list("number", "outcome")) == {(1, "succeeded")}
    assert time.monotonic() - started < 4.0  # three rounds of two, not one at a time


@pytest.mark.usefixtures("transactional_db", "private_broker")
def test_a_receivers_room_goes_in_claim_order_across_its_endpoints(
    slow_server, hooked, webhook_settings
):
    # Two endpoints (installations) of one receiver, which gets one POST at a time from this
    # worker: a POST that ended passes its endpoint's slot on to the endpoint's next delivery
    # only when no older delivery of the other endpoint waits for the receiver.
    webhook_settings.WEBHOOK_RECEIVER_CONCURRENCY = 1
    first, _ = hooked(slow_server.url("/first"))
    second, _ = hooked(slow_server.url("/second"))
    with transaction.atomic():
        for space in (first, second, first, first):
            update(space)

    assert webhook_deliver_due() == 4
    assert [request.path for request in slow_server.requests] == [
        "/first",
        "/second",
        "/first",
        "/first",
    ]
    assert set(Delivery.objects.values_list("status", "attempts")) == {("succeeded", 1)}


@pytest.mark.slow
@pytest.mark.usefixtures("transactional_db", "webhook_settings")
def test_a_retry_goes_through_the_drain_and_its_receivers_bound(
    private_broker, receiver, hooked, settings
):
    settings.WEBHOOK_RECEIVER_CONCURRENCY = 1
    settings.WEBHOOK_RETRY_BASE_DELAY = 0.5  # the first drain is over by then
    receiver.respond(503, 200)
    space, installation = hooked(receiver.url)
    update(space)
    assert webhook_deliver_due() == 1
    (delivery,) = Delivery.objects.filter(installation=installation)
    assert delivery.status == "retrying"
    assert private_broker.tasks("webhooks") == [DRAIN, RETRY]
    private_broker.empty()

    wait_until(lambda: Delivery.objects.get(pk=delivery.pk).next_attempt_at <= timezone.now())
    webhook_deliver(delivery.pk)  # the retry task at its countdown: it asks for a drain
    assert private_broker.tasks("webhooks") == [DRAIN]
    assert len(receiver.requests) == 1

    busy = f"127.0.0.1:{receiver.server.server_port}"
    assert slots.take(busy)  # another POST of this process to the receiver is in flight
    freed = threading.Timer(0.3, slots.give_back, args=(busy, 0.3))
    freed.start()
    started = time.monotonic()
    assert webhook_deliver_due() == 1  # it waited for the slot, was postponed, came back
    freed.join()
    assert time.monotonic() - started >= 0.3
    delivery.refresh_from_db()
    assert (delivery.status, delivery.attempts) == ("succeeded", 2)
    assert len(receiver.requests) == 2
    assert list(DeliveryAttempt.objects.values_list("number", "outcome")) == [
        (1, "retry"),
        (2, "succeeded"),
    ]
