"""A delivery whose lease ran out while its attempt was open, and that another worker claimed,
is settled once, by the worker holding the lease, with one attempt row; the late worker's
result is dropped and its drain goes on. A database failure while settling writes neither
the delivery's new state nor its attempt row.

Real receivers, real threads for the two workers (each with its own database connection).
"""

import logging
import threading
import time

import pytest
from django.db import connection, transaction

from docplatform.events.leases import (
    Result,
    deliveries_settle,
    deliveries_start_due,
    delivery_claim,
)
from docplatform.events.models import Delivery
from docplatform.models import Revision
from docplatform.revisions import space_content_update
from tests.factories import SpaceFactory
from webhooks.models import DeliveryAttempt
from webhooks.services.delivery import CLAIM_READS, webhook_deliver_due

pytestmark = pytest.mark.usefixtures("transactional_db", "private_broker")

LEASE_SECONDS = 1


@pytest.fixture(autouse=True)
def short_lease(webhook_settings):
    webhook_settings.DELIVERY_LEASE_SECONDS = LEASE_SECONDS
    webhook_settings.WEBHOOK_RESPONSE_TIMEOUT = 5.0
    webhook_settings.WEBHOOK_RETRY_BASE_DELAY = 30.0


@pytest.fixture
def hooked(organization, install_webhook):
    def make(url: str):
        space = SpaceFactory(organization=organization)
        space.current_revision = Revision.objects.create(space=space, message="first")
        space.save()
        install_webhook(space=space, url=url, space_content_updated=True)
        return space

    return make


def update(space):
    space_content_update(space=space, pages=[{"path": "p", "title": "P"}])


@pytest.fixture
def workers():
    """Starts workers; each is done before the test's database is emptied."""
    started = []

    def start(work, *args):
        worker = Worker(work, *args)
        worker.start()
        started.append(worker)
        return worker

    yield start
    for worker in started:
        worker.join(20)


class Worker(threading.Thread):
    """Runs ``work`` as a worker would, in a thread with its own database connection; keeps
    what it returned or raised."""

    def __init__(self, work, *args):
        super().__init__(daemon=True)
        self.work, self.args = work, args
        self.returned = self.raised = None

    def run(self):
        try:
            self.returned = self.work(*self.args)
        except BaseException as exc:  # the test reports it
            self.raised = exc
        finally:
            connection.close()

    def result(self, timeout=15):
        self.join(timeout)
        assert not self.is_alive(), "the worker did not finish"
        if self.raised is not None:
            raise self.raised
        return self.returned


@pytest.mark.slow
def test_a_late_result_after_a_takeover_is_dropped(receiver, hooked, workers, caplog):
    receiver.respond((200, {}, b"", 2.0), 200)  # the first attempt outlives its lease
    update(hooked(receiver.url))
    delivery = Delivery.objects.get(consumer="webhook")

    first = workers(webhook_deliver_due)
    receiver.wait_for(1)
    time.sleep(LEASE_SECONDS + 0.1)  # the lease ran out: the drain the sweeper sends takes it
    with caplog.at_level(logging.WARNING, logger="docplatform.events.outbox"):
        assert webhook_deliver_due() == 1
        delivery.refresh_from_db()
        assert (delivery.status, delivery.attempts) == ("succeeded", 1)

        assert first.result() == 1  # its drain ended normally
    delivery.refresh_from_db()
    assert (delivery.status, delivery.attempts, delivery.outcome) == ("succeeded", 1, "HTTP 200")
    (attempt,) = DeliveryAttempt.objects.all()  # the holder's, once
    assert (attempt.number, attempt.status_code, attempt.duration_ms < 1000) == (1, 200, True)
    assert len(receiver.requests) == 2
    assert f"deliveries [{delivery.pk}]: lease taken over (or settled already)" in caplog.text


@pytest.mark.slow
def test_a_result_settled_before_the_new_holder_is_dropped_and_the_holder_settles(
    receiver, hooked, workers
):
    receiver.respond((200, {}, b"", 1.5), (503, {}, b"", 2.0))
    update(hooked(receiver.url))
    delivery = Delivery.objects.get(consumer="webhook")

    first = workers(webhook_deliver_due)
    receiver.wait_for(1)
    time.sleep(LEASE_SECONDS + 0.1)
    second = workers(webhook_deliver_due)  # claims it; its receiver answers later
    receiver.wait_for(2)
    assert first.result() == 1  # ended at 1.5 s: its 200 is not the delivery's any more
    delivery.refresh_from_db()
    assert (delivery.status, delivery.attempts) == ("pending", 0)
    assert delivery.lease_expires_at is not None  # still the second worker's
    assert not DeliveryAttempt.objects.exists()

    second.result()
    delivery.refresh_from_db()
    assert (delivery.status, delivery.attempts, delivery.last_error) == ("retrying", 1, "HTTP 503")
    (attempt,) = DeliveryAttempt.objects.all()
    assert (attempt.number, attempt.status_code, attempt.outcome) == (1, 503, "retry")


@pytest.mark.slow
def test_settling_a_batch_writes_only_what_is_still_held(receiver, hooked):
    for _ in range(3):
        update(hooked(receiver.url))
    claimed, deliveries = deliveries_start_due("webhook", limit=10, reads=CLAIM_READS)
    assert claimed == 3
    time.sleep(LEASE_SECONDS + 0.1)
    taken_over = delivery_claim(deliveries[1].pk)  # another worker's claim
    assert taken_over is not None

    def succeeded(delivery):
        attempt = DeliveryAttempt(
            delivery=delivery, number=1, started_at=delivery.created_at, duration_ms=5, url="u"
        )
        attempt.outcome = "succeeded"
        return Result.succeeded(outcome="HTTP 200", attempts=1, log=[attempt])

    # One UPDATE for the three would touch only two rows: undone, and each settled alone.
    settled = deliveries_settle([(delivery, succeeded(delivery)) for delivery in deliveries])
    assert [d.pk for d in settled] == [deliveries[0].pk, deliveries[2].pk]
    rows = dict(Delivery.objects.values_list("pk", "status"))
    assert [rows[d.pk] for d in deliveries] == ["succeeded", "pending", "succeeded"]
    assert sorted(DeliveryAttempt.objects.values_list("delivery_id", flat=True)) == [
        deliveries[0].pk,
        deliveries[2].pk,
    ]
    # The new holder settles it, once.
    assert deliveries_settle([(taken_over, succeeded(taken_over))]) == [taken_over]
    assert deliveries_settle([(taken_over, succeeded(taken_over))]) == []
    assert DeliveryAttempt.objects.count() == 3


def failing_attempt_inserts():
    """A real database failure: a trigger refuses every attempt row."""
    table = DeliveryAttempt._meta.db_table
    with connection.cursor() as cursor:
        if connection.vendor == "postgresql":
            cursor.execute(
                "CREATE FUNCTION refuse_attempt() RETURNS trigger AS $$ BEGIN "
                "RAISE EXCEPTION 'disk full (test)'; END $$ LANGUAGE plpgsql"
            )
            cursor.execute(
                f"CREATE TRIGGER refuse_attempt BEFORE INSERT ON {table} "
                "FOR EACH ROW EXECUTE FUNCTION refuse_attempt()"
            )
        else:
            cursor.execute(
                f"CREATE TRIGGER refuse_attempt BEFORE INSERT ON {table} "
                "BEGIN SELECT RAISE(ABORT, 'disk full (test)'); END"
            )


def attempt_inserts_work_again():
    table = DeliveryAttempt._meta.db_table
    with connection.cursor() as cursor:
        if connection.vendor == "postgresql":
            cursor.execute(f"DROP TRIGGER IF EXISTS refuse_attempt ON {table}")
            cursor.execute("DROP FUNCTION IF EXISTS refuse_attempt()")
        else:
            cursor.execute("DROP TRIGGER IF EXISTS refuse_attempt")


@pytest.mark.slow
def test_a_database_failure_while_settling_loses_both_or_neither(receiver, hooked, caplog):
    receiver.respond(200, path="/hooks")
    receiver.respond(500, path="/busy")
    with transaction.atomic():
        update(hooked(receiver.url))
        update(hooked(receiver.url_for("/busy")))
    failing_attempt_inserts()
    try:
        with caplog.at_level(logging.ERROR, logger="webhooks.services.delivery"):
            assert webhook_deliver_due() == 2  # the drain survives the failure
        assert "not settled, left to their lease" in caplog.text
        assert len(receiver.requests) == 2
        # Neither the deliveries' new state nor an attempt row: they are still held, untouched.
        assert set(Delivery.objects.values_list("status", "attempts")) == {("pending", 0)}
        assert not Delivery.objects.filter(lease_expires_at__isnull=True).exists()
        assert not DeliveryAttempt.objects.exists()
    finally:
        attempt_inserts_work_again()

    time.sleep(LEASE_SECONDS + 0.1)  # their lease runs out: they are due again
    assert webhook_deliver_due() == 2
    assert len(receiver.requests) == 4
    outcomes = set(
        DeliveryAttempt.objects.values_list("delivery__status", "number", "status_code", "outcome")
    )
    assert outcomes == {("succeeded", 1, 200, "succeeded"), ("retrying", 1, 500, "retry")}
