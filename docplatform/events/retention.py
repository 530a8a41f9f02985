"""How long the outbox keeps its rows: events are purged once older than
``EVENT_RETENTION_DAYS`` and settled, hourly (``docplatform.tasks.purge_events``, Celery
beat), a batch at a time.

**Settled** is the one rule of ``Delivery.OPEN_STATUSES``: an event with a delivery still
pending or retrying (queued, waiting for its retry, or held by a worker now) is kept, however
old, and purged at the first run after its last delivery settles. Its settled deliveries and
their consumers' logs (webhook attempts) go with it (their foreign keys cascade); no other row
refers to an event by key (a replay keeps event ids as data and skips those gone:
``outbox.deliveries_add``).

**Batches.** Each batch is one transaction of at most ``EVENT_PURGE_BATCH`` events: their
rows are locked (on PostgreSQL, skipping any another transaction holds), their deliveries
locked and checked again, so a delivery reopened meanwhile (a redelivery, a replay) keeps its
event, and no lock is held longer than one batch takes.
"""

from datetime import datetime, timedelta

from django.conf import settings
from django.db import transaction
from django.db.models import Exists, OuterRef, QuerySet
from django.utils import timezone

from .models import Delivery, Event


def rows_purge(rows: QuerySet, *, batch: int) -> int:
    """Delete ``rows`` (with what cascades from them) ``batch`` at a time, each batch its own
    statement, so no delete holds its locks for long on a busy table; returns how many of
    ``rows`` (the purges of settled webhook deliveries and of integration logs)."""
    deleted = 0
    while True:
        keys = list(rows.order_by().values_list("pk", flat=True)[:batch])
        if not keys:
            return deleted
        _, by_model = rows.model.objects.filter(pk__in=keys).delete()
        deleted += by_model.get(rows.model._meta.label, 0)


def events_purgeable(now: datetime | None = None) -> QuerySet:
    """The events past retention whose every delivery is settled."""
    cutoff = (now or timezone.now()) - timedelta(days=settings.EVENT_RETENTION_DAYS)
    open_deliveries = Delivery.objects.filter(
        event=OuterRef("pk"), status__in=Delivery.OPEN_STATUSES
    )
    return Event.objects.filter(created_at__lt=cutoff).exclude(Exists(open_deliveries))


def events_purge(now: datetime | None = None) -> int:
    """Delete the purgeable events with their deliveries, ``EVENT_PURGE_BATCH`` at a time;
    returns how many events."""
    purgeable = events_purgeable(now).order_by()
    deleted = 0
    while True:
        with transaction.atomic():
            batch = list(
                purgeable.select_for_update(skip_locked=True, of=("self",)).values_list(
                    "pk", flat=True
                )[: settings.EVENT_PURGE_BATCH]
            )
            if not batch:
                return deleted
            # Lock their deliveries, then look again: one reopened meanwhile keeps its event.
            list(
                Delivery.objects.filter(event_id__in=batch)
                .select_for_update()
                .values_list("pk", flat=True)
            )
            settled = list(purgeable.filter(pk__in=batch).values_list("pk", flat=True))
            _, by_model = Event.objects.filter(pk__in=settled).delete()
            deleted += by_model.get(Event._meta.label, 0)
