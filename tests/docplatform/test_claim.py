"""Claiming due deliveries: one statement takes the leases, concurrent drains never take the
same delivery, and what is not due (leased, waiting for its retry, closed) is left. Taking
turns: no more than a consumer's bound of claimed deliveries are attempted at once, however
many workers claim them together."""

import threading
from datetime import timedelta

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from docplatform.events.leases import (
    ClaimReads,
    Result,
    deliveries_claim_due,
    delivery_claim,
    delivery_settle,
    delivery_take_turn,
)
from docplatform.events.models import Delivery
from docplatform.models import Revision
from docplatform.revisions import space_content_update
from integrations.models import Integration
from integrations.services.installations import installation_create
from tests.factories import SpaceFactory

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def due(private_broker, org_admin, organization, settings):
    """Twenty open webhook deliveries, due (the drains sent for them go to a private broker
    that no worker reads)."""
    settings.WEBHOOK_ALLOWED_NETWORKS = ["127.0.0.0/8"]
    space = SpaceFactory(organization=organization)
    space.current_revision = Revision.objects.create(space=space, message="first")
    space.save()
    installation_create(
        user=org_admin,
        integration=Integration.objects.get(name="webhook"),
        organization=organization,
        space=space,
        configuration={"url": "http://127.0.0.1:9/hooks", "space_content_updated": True},
    )
    for n in range(20):
        space_content_update(space=space, pages=[{"path": f"p{n}", "title": "P"}])
    deliveries = Delivery.objects.filter(consumer="webhook", status="pending")
    assert deliveries.count() == 20
    return sorted(deliveries.values_list("pk", flat=True))


def test_a_claim_is_one_statement_and_a_read(due):
    with CaptureQueriesContext(connection) as queries:
        claimed = deliveries_claim_due("webhook", limit=5)
    assert [delivery.pk for delivery in claimed] == due[:5]  # oldest first
    assert all(delivery.lease_expires_at > timezone.now() for delivery in claimed)
    assert [query["sql"].split()[0] for query in queries.captured_queries] == ["UPDATE", "SELECT"]
    assert claimed[0].event.type == "space_content_updated"  # read with its event

    with CaptureQueriesContext(connection) as queries:
        assert deliveries_claim_due("webhook", limit=50, skip=due[5:10]) != []
        assert deliveries_claim_due("webhook", limit=50) != []  # the skipped ones
        assert deliveries_claim_due("webhook", limit=50) == []
    assert len(queries.captured_queries) == 5  # an empty claim is one statement


def test_a_claim_reads_what_it_leased_as_stored(due):
    """The claim's instances are the rows as stored (its statements are compiled once and
    read without the ORM's query), with the lease the claim took, their event and
    installation read with them, and nothing else of the installation's secrets."""
    reads = ClaimReads(related=("event", "installation"), deferred=("installation__credentials",))
    [claimed] = deliveries_claim_due("webhook", limit=1, reads=reads)
    stored = Delivery.objects.select_related("event", "installation").get(pk=claimed.pk)
    assert claimed.lease_expires_at == stored.lease_expires_at > timezone.now()
    assert (claimed.status, claimed.event_uuid, claimed.created_at) == (
        stored.status,
        stored.event_uuid,
        stored.created_at,
    )
    assert claimed.event.payload == stored.event.payload  # JSON read as the ORM reads it
    assert isinstance(claimed.event.payload, dict)
    assert claimed.installation.configuration == stored.installation.configuration
    assert "credentials" in claimed.installation.get_deferred_fields()
    with CaptureQueriesContext(connection) as queries:
        read = (claimed.event.organization_id, claimed.installation.integration_id)
    assert queries.captured_queries == [] and None not in read


def test_claims_of_another_consumer_or_size_take_only_theirs(due):
    """Statements kept for later claims (per database, size and reads) are run with each
    claim's own consumer, time and skipped ids."""
    assert deliveries_claim_due("runtime", limit=5) == []
    assert [d.pk for d in deliveries_claim_due("webhook", limit=2, skip=due[:1])] == due[1:3]
    assert [d.pk for d in deliveries_claim_due("webhook", limit=2)] == [due[0], due[3]]
    assert deliveries_claim_due("runtime", limit=2) == []


def test_what_is_not_due_is_left(due):
    later = timezone.now() + timedelta(minutes=5)
    Delivery.objects.filter(pk=due[0]).update(lease_expires_at=later)  # another worker's
    Delivery.objects.filter(pk=due[1]).update(status="retrying", next_attempt_at=later)
    Delivery.objects.filter(pk=due[2]).update(status="succeeded")
    Delivery.objects.filter(pk=due[3]).update(lease_expires_at=timezone.now() - timedelta(1))
    claimed = [delivery.pk for delivery in deliveries_claim_due("webhook", limit=50)]
    assert claimed == due[3:]  # a lease that ran out is free again


def test_concurrent_claims_take_each_delivery_once(due):
    taken, errors = [], []
    start = threading.Barrier(4, timeout=30)

    def drain():
        try:
            start.wait()
            while claimed := deliveries_claim_due("webhook", limit=3):
                taken.extend(delivery.pk for delivery in claimed)
        except Exception as exc:
            errors.append(exc)
        finally:
            connection.close()

    threads = [threading.Thread(target=drain) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    assert errors == []
    assert sorted(taken) == due


def test_turns_stop_at_the_bound_and_a_settled_attempt_gives_its_turn_back(due):
    claimed = deliveries_claim_due("webhook", limit=4)
    same = {"installation_id": claimed[0].installation_id}
    turns = [delivery_take_turn(delivery, limit=2, **same) for delivery in claimed]
    assert turns == [True, True, False, False]

    delivery_settle(claimed[0], Result.succeeded(attempts=1))
    assert delivery_take_turn(claimed[3], limit=2, **same) is True
    assert Delivery.objects.get(pk=claimed[0].pk).attempt_started_at is None


def test_an_attempt_whose_lease_ran_out_takes_no_turn(due):
    first, second = deliveries_claim_due("webhook", limit=2)
    assert delivery_take_turn(first, limit=1) is True
    # Its worker died: the lease runs out and another worker claims the delivery again.
    Delivery.objects.filter(pk=first.pk).update(lease_expires_at=timezone.now())
    again = delivery_claim(first.pk)
    assert again.attempt_started_at is None
    assert delivery_take_turn(second, limit=1) is True
    assert delivery_take_turn(again, limit=1) is False
    # The first worker, back, finds its lease gone: no turn, whatever the bound.
    assert delivery_take_turn(first, limit=10) is False


@pytest.mark.parametrize("round_", range(3))
def test_workers_claiming_together_never_take_more_turns_than_the_bound(due, round_):
    """Eight workers claim a delivery each at once and ask for a turn of a group bounded to
    two: two get one, whatever the order their claims' stamps and commits came in."""
    turns, errors = [], []
    start = threading.Barrier(8, timeout=30)

    def worker(pk):
        try:
            start.wait()
            delivery = delivery_claim(pk)
            turns.append(delivery_take_turn(delivery, limit=2))
        except Exception as exc:
            errors.append(exc)
        finally:
            connection.close()

    threads = [threading.Thread(target=worker, args=(pk,)) for pk in due[:8]]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    assert errors == []
    assert sorted(turns) == [False] * 6 + [True] * 2
