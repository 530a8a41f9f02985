"""The outbox's move into the host (docplatform.events) keeps every row: events, deliveries,
drain requests and the webhook attempts that point at deliveries, forwards and backwards."""

import uuid

import pytest
from django.utils import timezone

from docplatform.events.models import Delivery, DrainRequest, Event
from webhooks.models import DeliveryAttempt

#: The last migrations before the move, in each app the move touches.
BEFORE = [
    ("docplatform", "0002_apitoken_expires_at"),
    ("integrations", "0008_installation_granted_scopes"),
    ("webhooks", "0001_initial"),
]
UUIDS = [uuid.UUID(int=n) for n in (1, 2, 3)]


def _old_rows(apps) -> None:
    """An organization with two installations, two events, three deliveries (one finished
    with two webhook attempts), and a drain request: written with the models as they were."""
    organization = apps.get_model("docplatform", "Organization").objects.create(
        id="o1", subdomain="old", title="Old"
    )
    integration = apps.get_model("integrations", "Integration").objects.create(
        id="i1", name="old-hook", organization=organization, title="Old", description="d"
    )
    other = apps.get_model("integrations", "Integration").objects.create(
        id="i2", name="old-bot", organization=organization, title="Bot", description="d"
    )
    installation, other = (
        apps.get_model("integrations", "Installation").objects.create(
            id=pk,
            integration=integration,
            organization=organization,
            level="organization",
            api_token_hash=pk * 32,
            api_token="t",
        )
        for pk, integration in (("n1", integration), ("n2", other))
    )
    event_model = apps.get_model("docplatform", "Event")
    first = event_model.objects.create(
        id="e1", type="space_view", organization=organization, payload={"spaceId": "s"}
    )
    second = event_model.objects.create(
        id="e2", type="installation_setup", organization=organization, payload={"status": "x"}
    )
    delivery_model = apps.get_model("integrations", "Delivery")
    done = delivery_model.objects.create(
        id=11,
        event=first,
        installation=installation,
        consumer="webhook",
        event_uuid=UUIDS[0],
        status="succeeded",
        attempts=2,
        outcome="HTTP 200",
        completed_at=timezone.now(),
    )
    delivery_model.objects.create(
        id=12, event=second, installation=installation, consumer="runtime", event_uuid=UUIDS[1]
    )
    delivery_model.objects.create(
        id=13,
        event=second,
        installation=other,
        consumer="webhook",
        event_uuid=UUIDS[2],
        status="retrying",
        attempts=1,
    )
    attempt_model = apps.get_model("webhooks", "DeliveryAttempt")
    for number, (status_code, outcome) in enumerate([(500, "retry"), (200, "succeeded")], 1):
        attempt_model.objects.create(
            delivery=done,
            number=number,
            started_at=timezone.now(),
            duration_ms=5,
            url="https://hooks.example/in",
            status_code=status_code,
            outcome=outcome,
        )
    apps.get_model("integrations", "DrainRequest").objects.create(
        consumer="webhook", requested_at=timezone.now()
    )


TODAY = (Event, Delivery, DeliveryAttempt, DrainRequest)


def _old_models(apps) -> tuple:
    return (
        apps.get_model("docplatform", "Event"),
        apps.get_model("integrations", "Delivery"),
        apps.get_model("webhooks", "DeliveryAttempt"),
        apps.get_model("integrations", "DrainRequest"),
    )


def _assert_rows(models) -> None:
    """The rows of _old_rows are all there, read with ``models`` (event, delivery, attempt,
    drain request)."""
    event_model, delivery_model, attempt_model, drain_model = models
    assert sorted(event_model.objects.values_list("id", flat=True)) == ["e1", "e2"]
    assert sorted(
        delivery_model.objects.values_list(
            "id", "event_id", "installation_id", "consumer", "event_uuid", "status", "attempts"
        )
    ) == [
        (11, "e1", "n1", "webhook", UUIDS[0], "succeeded", 2),
        (12, "e2", "n1", "runtime", UUIDS[1], "pending", 0),
        (13, "e2", "n2", "webhook", UUIDS[2], "retrying", 1),
    ]
    assert sorted(attempt_model.objects.values_list("delivery_id", "number", "status_code")) == [
        (11, 1, 500),
        (11, 2, 200),
    ]
    assert list(drain_model.objects.values_list("consumer", flat=True)) == ["webhook"]


@pytest.mark.slow
@pytest.mark.django_db(transaction=True)
def test_moving_the_outbox_into_the_host_keeps_every_row(migrate_to):
    old = migrate_to(BEFORE)
    _old_rows(old)

    migrate_to.latest()
    _assert_rows(TODAY)
    # The rows work as today's: joined, extended (the id sequence survived the rename),
    # and deleted with their event, attempts and all.
    done = Delivery.objects.select_related("event", "installation").get(pk=11)
    assert (done.event.type, done.installation.integration.name) == ("space_view", "old-hook")
    assert list(done.attempts_log.values_list("number", flat=True)) == [1, 2]
    added = Delivery.objects.create(
        event_id="e1", installation_id="n2", consumer="runtime", event_uuid=uuid.uuid4()
    )
    # a row of its own (PostgreSQL's sequence does not count the ids given explicitly
    # above: the first id it hands out depends on what ran before in the session)
    assert added.pk not in (11, 12, 13)
    assert Delivery.objects.filter(pk=added.pk, event_id="e1").exists()
    added.delete()

    # And back: the old apps find the same rows where they were.
    old = migrate_to(BEFORE)
    _assert_rows(_old_models(old))

    migrate_to.latest()
    Event.objects.filter(pk="e1").delete()
    assert not Delivery.objects.filter(pk=11).exists()
    assert not DeliveryAttempt.objects.exists()
