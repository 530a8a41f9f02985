"""An event and its deliveries as ``fire`` writes them (``events.inserts``: on PostgreSQL one
statement compiled once): the instances are left as the ORM's create and bulk_create leave
them, holding what the database holds."""

import uuid

import pytest
from django.utils import timezone

from docplatform.events.inserts import event_insert
from docplatform.events.models import Delivery, Event
from docplatform.ids import new_id
from integrations.models import Installation
from tests.factories import IntegrationFactory

pytestmark = pytest.mark.django_db


def as_stored(instance) -> tuple[list, list]:
    """Each column's value as the instance holds it, and as the database does."""
    names = [field.attname for field in type(instance)._meta.concrete_fields]
    stored = type(instance).objects.get(pk=instance.pk)
    return [getattr(instance, name) for name in names], [getattr(stored, name) for name in names]


@pytest.mark.parametrize("count", [0, 1, 3])
def test_the_instances_are_saved_as_they_are_stored(organization, count):
    installations = [
        Installation.objects.create(
            integration=IntegrationFactory(organization=organization),
            organization=organization,
            level=Installation.Level.ORGANIZATION,
            api_token_hash=new_id(),
        )
        for _ in range(count)
    ]
    event = Event(type="space_view", organization=organization, payload={"spaceId": "é", "n": [1]})
    deliveries = [
        Delivery(
            event=event,
            installation_id=installation.pk,
            consumer="runtime",
            event_uuid=uuid.uuid4(),
            queued_at=timezone.now() if n == 1 else None,
        )
        for n, installation in enumerate(installations)
    ]

    event_insert(event, deliveries)

    for instance in [event, *deliveries]:
        assert not instance._state.adding and instance._state.db == "default"
        held, stored = as_stored(instance)
        assert held == stored
    assert event.created_at is not None and event.traceparent == ""
    assert [delivery.installation_id for delivery in event.deliveries.order_by("pk")] == [
        installation.pk for installation in installations
    ]
    if deliveries:
        assert (deliveries[0].status, deliveries[0].attempts, deliveries[0].chain) == (
            Delivery.Status.PENDING,
            0,
            1,
        )
