"""The outbox's public API as consumers use it: the payload catalogue, the registries the
apps fill, and claim / settle with results."""

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from docplatform import events
from docplatform.events.leases import (
    Result,
    deliveries_settle,
    deliveries_start_due,
    delivery_settle,
    delivery_start,
)
from docplatform.events.models import Delivery, Event
from docplatform.events.registry import consumer_names, routers
from docplatform.revisions import space_content_update
from integrations.services.installations import installation_create, installation_pause
from tests.conftest import broker_unreachable


@pytest.fixture
def deliveries(publish, org_admin, organization, space):
    """Three open runtime deliveries of one content update, left unqueued (the setup events'
    deliveries are closed)."""
    for name in ("first", "second", "third"):
        installation_create(
            user=org_admin,
            integration=publish(org_admin, name=name, scopes=["space:content:read"]),
            organization=organization,
            space=space,
        )
    with broker_unreachable():
        space_content_update(space=space, pages=[{"path": "a", "title": "A"}])
    Delivery.objects.exclude(event__type="space_content_updated").update(status="succeeded")
    return list(Delivery.objects.filter(event__type="space_content_updated").order_by("pk"))


def test_the_apps_register_their_router_and_consumers(db):
    assert [router.name for router in routers()] == ["installations"]
    assert consumer_names() == ["runtime", "webhook"]


@pytest.mark.django_db
def test_a_payload_is_built_by_the_catalogue_only(organization, space):
    with pytest.raises(TypeError, match=r"space_view: missing fields \['visitor'\]"):
        events.fire("space_view", organization=organization, space=space, spaceId=space.id)
    with pytest.raises(TypeError, match=r"unknown fields \['extra'\]"):
        events.fire(
            "space_content_updated",
            organization=organization,
            space=space,
            spaceId=space.id,
            revisionId=None,
            extra=1,
        )
    with pytest.raises(TypeError, match="unknown event type"):
        events.fire("space_deleted", organization=organization, space=space)
    assert not Event.objects.exists()
    event = events.fire(
        "space_gitsync_started",
        organization=organization,
        space=space,
        status="running",
        spaceId=space.id,
    )
    assert list(event.payload) == ["spaceId", "status"]  # the catalogue's order


def test_settling_writes_each_result_and_one_statement_per_distinct_result(deliveries):
    at = timezone.now()
    claimed, started = deliveries_start_due("runtime", limit=10)
    assert claimed == 3
    assert all(delivery.lease_expires_at for delivery in started)
    with CaptureQueriesContext(connection) as queries:
        deliveries_settle(
            [(d, Result.succeeded(outcome="handled", attempts=1, at=at)) for d in started[:2]]
        )
    # One UPDATE (in a transaction: SAVEPOINT and RELEASE here, inside the test's own).
    assert [q["sql"].split()[0] for q in queries] == ["SAVEPOINT", "UPDATE", "RELEASE"]
    with broker_unreachable():
        delivery_settle(started[2], Result.retry(retry_in=30, error="host down", attempts=1))
    rows = {d.pk: d for d in Delivery.objects.filter(pk__in=[d.pk for d in deliveries])}
    for delivery in started[:2]:
        row = rows[delivery.pk]
        assert (row.status, row.outcome, row.attempts, row.completed_at) == (
            "succeeded",
            "handled",
            1,
            at,
        )
        assert row.lease_expires_at is None
    retrying = rows[started[2].pk]
    assert (retrying.status, retrying.last_error, retrying.attempts) == ("retrying", "host down", 1)
    assert retrying.lease_expires_at is None and retrying.completed_at is None
    assert 25 < (retrying.next_attempt_at - timezone.now()).total_seconds() <= 30
    # The caller's rows are brought up to date too.
    assert started[2].status == "retrying"


def test_a_delivery_its_router_no_longer_wants_is_cancelled_at_claim(
    deliveries, org_admin, organization
):
    installation_pause(user=org_admin, installation=deliveries[0].installation)
    assert delivery_start(deliveries[0].pk) is None
    deliveries[0].refresh_from_db()
    assert (deliveries[0].status, deliveries[0].outcome) == ("cancelled", "installation paused")
    assert delivery_start(deliveries[1].pk).pk == deliveries[1].pk
