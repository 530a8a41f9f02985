"""Fresh deliveries go out in batches: a burst of events queues one drain task, which claims
the due deliveries, POSTs them at once and settles each by its own outcome.

These tests queue to a broker of their own (no worker takes from it): they count what was
queued, then run the drain where the worker would, in this process.
"""

import time

import pytest
from django.db import transaction

from docplatform.events.models import Delivery, DrainRequest
from docplatform.events.outbox import deliveries_sweep
from docplatform.models import Revision
from docplatform.revisions import space_content_update
from integrations.operators import OPERATOR
from integrations.services.installations import installation_pause
from tests.conftest import broker_unreachable
from tests.factories import SpaceFactory
from webhooks.models import DeliveryAttempt
from webhooks.services.delivery import webhook_deliver_due

pytestmark = pytest.mark.usefixtures("transactional_db", "webhook_settings")

DRAIN = "webhooks.tasks.deliver_due"
RETRY = "webhooks.tasks.deliver"


def update(space):
    space_content_update(space=space, pages=[{"path": "p", "title": "P"}])


@pytest.fixture
def hooked_space(organization, install_webhook, receiver):
    """A new space with a webhook installation posting to ``path`` on the receiver."""

    def make(path: str = "/hooks"):
        space = SpaceFactory(organization=organization)
        space.current_revision = Revision.objects.create(space=space, message="first")
        space.save()
        installation = install_webhook(
            space=space, url=receiver.url_for(path), space_content_updated=True
        )
        return space, installation

    return make


def test_a_burst_queues_one_drain_which_delivers_each_event_once(
    private_broker, receiver, hooked_space, settings
):
    settings.WEBHOOK_BATCH_SIZE = 8
    space, _ = hooked_space()
    for _ in range(20):
        update(space)  # each its own transaction
    assert private_broker.tasks("webhooks") == [DRAIN]

    private_broker.empty()
    assert webhook_deliver_due() == 20
    assert len(receiver.requests) == 20
    assert len({r.headers["X-Service-Delivery"] for r in receiver.requests}) == 20
    deliveries = Delivery.objects.filter(consumer="webhook")
    assert set(deliveries.values_list("status", "attempts")) == {("succeeded", 1)}
    assert DeliveryAttempt.objects.count() == 20
    # Its first batch was full, so it asked another worker slot to share the backlog.
    assert private_broker.tasks("webhooks") == [DRAIN]
    assert webhook_deliver_due() == 0


@pytest.mark.slow
def test_one_batch_settles_each_delivery_by_its_own_outcome(
    private_broker, receiver, hooked_space, settings
):
    settings.WEBHOOK_RETRY_BASE_DELAY = 30.0  # the retry stays queued
    receiver.respond(200, path="/ok")
    receiver.respond(503, path="/busy")
    receiver.respond(410, path="/gone")
    spaces = {path: hooked_space(path) for path in ("/ok", "/busy", "/gone", "/paused")}
    with transaction.atomic():
        for space, _ in spaces.values():
            update(space)
    installation_pause(user=OPERATOR, installation=spaces["/paused"][1])
    private_broker.empty()

    assert webhook_deliver_due() == 4
    delivery = {
        path: Delivery.objects.get(consumer="webhook", installation=installation)
        for path, (_, installation) in spaces.items()
    }
    assert (delivery["/ok"].status, delivery["/ok"].outcome) == ("succeeded", "HTTP 200")
    assert (delivery["/gone"].status, delivery["/gone"].last_error) == ("failed", "HTTP 410")
    assert (delivery["/paused"].status, delivery["/paused"].outcome) == (
        "cancelled",
        "installation paused",
    )
    busy = delivery["/busy"]
    assert (busy.status, busy.attempts, busy.lease_expires_at) == ("retrying", 1, None)
    (attempt,) = DeliveryAttempt.objects.filter(delivery=busy)
    assert attempt.status_code == 503 and 27 <= attempt.next_delay <= 33
    assert private_broker.tasks("webhooks") == [RETRY]  # at its countdown
    assert receiver.to("/paused") == []
    assert DeliveryAttempt.objects.count() == 3


@pytest.mark.slow
def test_a_slow_receiver_does_not_hold_up_the_rest_of_its_batch(
    private_broker, receiver, hooked_space
):
    receiver.respond((200, {}, b"", 1.5), path="/slow")  # within the 2 s timeout of the tests
    receiver.respond(200, path="/fast")
    slow, _ = hooked_space("/slow")
    fast, _ = hooked_space("/fast")
    with transaction.atomic():
        update(slow)  # claimed first
        update(fast)

    assert webhook_deliver_due() == 2
    (slow_request,) = receiver.to("/slow")
    (fast_request,) = receiver.to("/fast")
    # Sent one after the other, the fast one would have waited for the slow answer.
    assert fast_request.at - slow_request.at < 1.0
    assert set(Delivery.objects.values_list("status", flat=True)) == {"succeeded"}


@pytest.mark.slow
def test_a_drain_the_broker_lost_is_sent_again_by_the_sweeper(
    private_broker, receiver, hooked_space, settings
):
    settings.DELIVERY_SWEEP_GRACE_SECONDS = 0
    space, _ = hooked_space()
    with broker_unreachable():
        update(space)
    # Nothing was queued, and the flag is clear, so the next event would try again...
    assert not DrainRequest.objects.filter(consumer="webhook", requested_at__isnull=False)
    assert private_broker.tasks("webhooks") == []
    time.sleep(0.01)
    # ...and the sweeper sends a drain for what waits.
    assert deliveries_sweep() == 1
    assert private_broker.tasks("webhooks") == [DRAIN]
    assert webhook_deliver_due() == 1
    assert Delivery.objects.get(consumer="webhook").status == "succeeded"
    assert len(receiver.requests) == 1


@pytest.mark.slow
def test_a_drain_leaves_deliveries_that_wait_for_their_retry(
    private_broker, receiver, hooked_space, settings
):
    settings.WEBHOOK_RETRY_BASE_DELAY = 30.0
    receiver.respond(500)
    space, _ = hooked_space()
    update(space)
    assert webhook_deliver_due() == 1
    assert Delivery.objects.get(consumer="webhook").status == "retrying"
    assert webhook_deliver_due() == 0  # not before its time
    assert len(receiver.requests) == 1


@pytest.mark.slow
def test_a_drain_with_nothing_in_flight_lets_go_at_once(
    private_broker, receiver, hooked_space, monkeypatch
):
    """Once its claim finds nothing and no POST is in flight, a drain clears its request and
    ends: it does not keep the request for a poll while events may commit (an event
    committed then would wait for the poll). With the poll made 30 s long, a drain of one
    delivery still ends at once, and the next commit queues a drain of its own."""
    monkeypatch.setattr("webhooks.services.drain.DRAIN_POLL_SECONDS", 30.0)
    space, _ = hooked_space()
    update(space)
    private_broker.empty()
    started = time.monotonic()
    assert webhook_deliver_due() == 1
    assert time.monotonic() - started < 10  # far below the poll
    assert len(receiver.requests) == 1
    assert DrainRequest.objects.get(consumer="webhook").requested_at is None
    update(space)
    assert private_broker.tasks("webhooks") == [DRAIN]
