"""The outbox of deliveries: creating, queueing, claiming, completing and sweeping them."""

import logging
import uuid
from collections import defaultdict
from dataclasses import dataclass
from datetime import timedelta
from functools import partial

from celery import current_app
from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import connection, transaction
from django.db.models import Q, QuerySet
from django.utils import timezone

from ..consumers import consumer_for, consumer_named
from ..models import Delivery, DrainRequest, Installation
from ..policies import is_paused, receives_event
from ..selectors import event_recipients, recipient_of

logger = logging.getLogger(__name__)


def deliveries_create(*, event, installation: Installation | None = None) -> list[Delivery]:
    """One delivery per recipient, in the caller's transaction; queued after commit."""
    if installation is not None:
        recipients = [] if is_paused(installation) else [recipient_of(installation)]
    else:
        recipients = event_recipients(event)
    deliveries = []
    now = timezone.now()
    for recipient in recipients:
        consumer = consumer_for(recipient.integration_name)
        if consumer.wants(recipient, event.type):
            deliveries.append(
                Delivery(
                    event=event,
                    installation_id=recipient.installation_id,
                    consumer=consumer.name,
                    event_uuid=uuid.uuid4(),
                    # A drained consumer's delivery is queued by the drain that commit requests.
                    queued_at=now if consumer.drain_task_name else None,
                )
            )
    Delivery.objects.bulk_create(deliveries)
    if deliveries:
        work = [(delivery.pk, delivery.consumer) for delivery in deliveries]
        transaction.on_commit(partial(_enqueue_after_commit, event.pk, work))
    return deliveries


def _enqueue_after_commit(event_id: str, work: list[tuple[int, str]]) -> None:
    """Drained consumers get one drain request each; of the others' deliveries, few are queued
    at once and a large fan-out is handed to one task."""
    drained = {name for _, name in work if consumer_named(name).drain_task_name}
    for name in sorted(drained):
        drain_request(name)
    work = [(delivery_id, name) for delivery_id, name in work if name not in drained]
    if not work:
        return
    if len(work) <= settings.DELIVERY_INLINE_FANOUT:
        deliveries_enqueue(work)
        return
    from ..tasks import enqueue_event_deliveries

    try:
        enqueue_event_deliveries.delay(event_id)
    except Exception:
        logger.warning(
            "broker unavailable: event %s is left to the sweeper", event_id, exc_info=True
        )


def deliveries_enqueue(work: list[tuple[int, str]], *, countdown: float | None = None) -> int:
    """Send each (delivery id, consumer name) to its consumer and mark it queued: one drain per
    drained consumer (unless a ``countdown`` asks for the delivery's own task), else a task
    per delivery.

    A broker failure is logged, not raised: the rows stay unqueued and the sweeper sends them
    once the broker is back. Returns how many were sent.
    """
    sent = []
    drained = set()
    if countdown is None:
        drained = {name for _, name in work if consumer_named(name).drain_task_name}
    for name in drained:
        if drain_request(name, force=True):
            sent += [delivery_id for delivery_id, consumer in work if consumer == name]
    direct = [(delivery_id, name) for delivery_id, name in work if name not in drained]
    try:
        for delivery_id, name in direct:
            current_app.send_task(
                consumer_named(name).task_name, args=[delivery_id], countdown=countdown
            )
            sent.append(delivery_id)
    except Exception:
        logger.warning(
            "broker unavailable: %d deliveries are left to the sweeper",
            len(work) - len(sent),
            exc_info=True,
        )
    if sent:
        Delivery.objects.filter(pk__in=sent).update(queued_at=timezone.now())
    return len(sent)


def drain_request(consumer: str, *, force: bool = False, args=()) -> bool:
    """Queue a drain of the consumer's due deliveries, unless the drain request flag is set
    (a drain is queued, or running and not yet caught up: it takes what commits meanwhile).
    ``force`` sends one whatever the flag says (the sweeper's way: a flag may be stale, and a
    drain with a backlog asks for help, passing the drain task's ``args``).

    Setting the flag only when it is clear is one statement (an upsert, so a missing row is no
    obstacle); RETURNING tells whether this call set it. A broker failure is logged and clears
    the flag. Returns whether a drain was sent.
    """
    if force:
        DrainRequest.objects.update_or_create(
            consumer=consumer, defaults={"requested_at": timezone.now()}
        )
    elif not _drain_flag_set(consumer):
        return False
    try:
        current_app.send_task(consumer_named(consumer).drain_task_name, args=list(args))
    except Exception:
        drain_release(consumer)
        logger.warning(
            "broker unavailable: %s deliveries are left to the sweeper", consumer, exc_info=True
        )
        return False
    return True


def _drain_flag_set(consumer: str) -> bool:
    """Set the consumer's drain request flag if it is clear; whether this call set it."""
    table = connection.ops.quote_name(DrainRequest._meta.db_table)
    now = connection.ops.adapt_datetimefield_value(timezone.now())
    with connection.cursor() as cursor:
        cursor.execute(
            f"INSERT INTO {table} (consumer, requested_at) VALUES (%s, %s) "  # noqa: S608
            f"ON CONFLICT (consumer) DO UPDATE SET requested_at = excluded.requested_at "
            f"WHERE {table}.requested_at IS NULL RETURNING consumer",
            [consumer, now],
        )
        return cursor.fetchone() is not None


def drain_release(consumer: str) -> None:
    """Clear the drain request flag: from now on a commit queues a new drain. A drain calls
    it once it caught up, then claims once more for what committed before."""
    DrainRequest.objects.filter(consumer=consumer).update(requested_at=None)


def deliveries_enqueue_for_event(event_id: str) -> int:
    work = list(
        Delivery.objects.filter(event_id=event_id, queued_at__isnull=True).values_list(
            "pk", "consumer"
        )
    )
    return deliveries_enqueue(work)


def deliveries_sweep() -> int:
    """Re-queue open deliveries that nobody is working on and that are overdue.

    Overdue: never queued (the broker was down at commit), or queued or due for a retry
    longer ago than the grace period without a worker holding them (a lost message, or a
    worker killed mid-flight whose lease ran out).
    """
    now = timezone.now()
    grace = now - timedelta(seconds=settings.DELIVERY_SWEEP_GRACE_SECONDS)
    stale = (
        Delivery.objects.filter(status__in=Delivery.OPEN_STATUSES)
        .filter(Q(lease_expires_at__isnull=True) | Q(lease_expires_at__lt=now))
        .filter(Q(queued_at__isnull=True, created_at__lt=grace) | Q(queued_at__lt=grace))
        .filter(Q(next_attempt_at__isnull=True) | Q(next_attempt_at__lt=grace))
    )
    work = list(stale.values_list("pk", "consumer")[: settings.DELIVERY_SWEEP_BATCH])
    if work:
        logger.info("sweeper re-queues %d deliveries", len(work))
    return deliveries_enqueue(work)


@dataclass(frozen=True)
class ClaimReads:
    """What a consumer reads with the deliveries it claims: the relations joined in, and the
    columns of those it leaves unread."""

    related: tuple[str, ...]
    deferred: tuple[str, ...] = ()


#: By default: the event and the installation (with the organization installation above it),
#: and the integration's current version, whose script goes to the runtime host only when it
#: asks (a deferred read then).
CLAIM_READS = ClaimReads(
    related=("event", "installation__integration__latest_version", "installation__parent"),
    deferred=("installation__integration__latest_version__bundle",),
)


def delivery_claim(delivery_id: int, *, reads=CLAIM_READS) -> Delivery | None:
    """Take the lease on an open delivery, or None when it is closed or another worker holds it."""
    now = timezone.now()
    claimed = (
        Delivery.objects.filter(pk=delivery_id, status__in=Delivery.OPEN_STATUSES)
        .filter(Q(lease_expires_at__isnull=True) | Q(lease_expires_at__lt=now))
        .update(lease_expires_at=now + timedelta(seconds=settings.DELIVERY_LEASE_SECONDS))
    )
    if not claimed:
        return None
    return _claimed(reads).get(pk=delivery_id)


def deliveries_claim_due(consumer: str, *, limit: int, reads=CLAIM_READS) -> list[Delivery]:
    """Take the lease on up to ``limit`` due deliveries of a consumer, oldest first: open, held
    by no worker, and not waiting for a retry's time. Concurrent drains skip each other's
    rows (FOR UPDATE SKIP LOCKED; SQLite's transactions are serial anyway)."""
    now = timezone.now()
    due = (
        Delivery.objects.filter(consumer=consumer, status__in=Delivery.OPEN_STATUSES)
        .filter(Q(lease_expires_at__isnull=True) | Q(lease_expires_at__lt=now))
        .filter(Q(next_attempt_at__isnull=True) | Q(next_attempt_at__lte=now))
        .order_by("pk")
    )
    with transaction.atomic():
        ids = list(due.select_for_update(skip_locked=True).values_list("pk", flat=True)[:limit])
        if not ids:
            return []
        Delivery.objects.filter(pk__in=ids).update(
            lease_expires_at=now + timedelta(seconds=settings.DELIVERY_LEASE_SECONDS)
        )
    return list(_claimed(reads).filter(pk__in=ids).order_by("pk"))


def _claimed(reads: ClaimReads) -> QuerySet:
    return Delivery.objects.select_related(*reads.related).defer(*reads.deferred)


def delivery_start(delivery_id: int, *, reads=CLAIM_READS) -> Delivery | None:
    """Claim an open delivery for one attempt; None when there is nothing to do: it is closed,
    another worker holds it, or its installation was paused meanwhile (then it is cancelled).
    ``reads`` narrows what is read with it (see ClaimReads)."""
    delivery = delivery_claim(delivery_id, reads=reads)
    return deliveries_still_wanted([delivery])[0] if delivery else None


def deliveries_start_due(consumer: str, *, limit: int, reads=CLAIM_READS):
    """Claim a batch of due deliveries (see deliveries_claim_due) and cancel those whose
    installation was paused meanwhile. Returns (claimed count, deliveries to attempt)."""
    claimed = deliveries_claim_due(consumer, limit=limit, reads=reads)
    return len(claimed), [d for d in deliveries_still_wanted(claimed) if d is not None]


def deliveries_still_wanted(deliveries: list[Delivery]) -> list[Delivery | None]:
    """Each claimed delivery, or None in its place when it was cancelled because it is no
    longer wanted (see delivery_still_wanted)."""
    kept = []
    for delivery in deliveries:
        if delivery_still_wanted(delivery):
            kept.append(delivery)
        else:
            delivery_cancel(delivery, reason="installation paused")
            kept.append(None)
    return kept


def delivery_still_wanted(delivery: Delivery) -> bool:
    """False when its installation was paused meanwhile (or, for a platform event, is no
    longer receiving). Setup events also reach a pending installation."""
    return receives_event(delivery.installation, delivery.event.type)


#: What an attempt changes on its delivery (saved by delivery_finish, delivery_retry_later and
#: deliveries_settle).
ATTEMPT_FIELDS = [
    "status",
    "attempts",
    "duration_ms",
    "outcome",
    "last_error",
    "lease_expires_at",
    "next_attempt_at",
    "completed_at",
]


def delivery_mark_finished(
    delivery: Delivery, *, status: str, outcome: str = "", error: str = "", at=None
) -> None:
    """Set a delivery's final state (completed ``at``, by default now) and release its lease
    (saved by the caller)."""
    delivery.status = status
    delivery.outcome = outcome[:200]
    delivery.last_error = error
    delivery.lease_expires_at = None
    delivery.next_attempt_at = None
    delivery.completed_at = at or timezone.now()


def delivery_mark_retrying(delivery: Delivery, *, delay: float, error: str) -> None:
    """Release the lease until the retry ``delay`` seconds from now (saved by the caller, and
    queued by deliveries_settle or delivery_retry_later)."""
    delivery.status = Delivery.Status.RETRYING
    delivery.last_error = error
    delivery.lease_expires_at = None
    delivery.next_attempt_at = timezone.now() + timedelta(seconds=delay)


def delivery_finish(delivery: Delivery, *, status: str, outcome: str = "", error: str = "") -> None:
    delivery_mark_finished(delivery, status=status, outcome=outcome, error=error)
    delivery.save(update_fields=ATTEMPT_FIELDS)


def delivery_cancel(delivery: Delivery, *, reason: str) -> None:
    delivery_finish(delivery, status=Delivery.Status.CANCELLED, outcome=reason)


def delivery_retry_later(delivery: Delivery, *, delay: float, error: str) -> None:
    """Release the lease and send the delivery to its consumer again after ``delay`` seconds."""
    delivery_mark_retrying(delivery, delay=delay, error=error)
    deliveries_settle([delivery])


def deliveries_settle(deliveries: list[Delivery]) -> None:
    """Save what attempts did to their deliveries (marked by delivery_mark_finished or
    delivery_mark_retrying), one UPDATE per distinct result (a batch that succeeded at one
    moment is one statement), then queue each retry at its countdown."""
    groups = defaultdict(list)
    for delivery in deliveries:
        groups[tuple(getattr(delivery, field) for field in ATTEMPT_FIELDS)].append(delivery.pk)
    for values, ids in groups.items():
        Delivery.objects.filter(pk__in=ids).update(**dict(zip(ATTEMPT_FIELDS, values, strict=True)))
    for delivery in deliveries:
        if delivery.status == Delivery.Status.RETRYING:
            countdown = (delivery.next_attempt_at - timezone.now()).total_seconds()
            deliveries_enqueue([(delivery.pk, delivery.consumer)], countdown=max(countdown, 0.0))


@transaction.atomic
def delivery_redeliver(delivery: Delivery) -> Delivery:
    """Send a finished delivery again: the same eventId, a new chain of attempts."""
    delivery = Delivery.objects.select_for_update().get(pk=delivery.pk)
    if delivery.status in Delivery.OPEN_STATUSES:
        raise ValidationError({"status": ["the delivery is still in progress"]})
    delivery.status = Delivery.Status.PENDING
    delivery.chain += 1
    delivery.attempts = 0
    delivery.outcome = ""
    delivery.last_error = ""
    delivery.completed_at = None
    delivery.next_attempt_at = None
    delivery.lease_expires_at = None
    delivery.queued_at = None
    delivery.save()
    work = [(delivery.pk, delivery.consumer)]
    transaction.on_commit(lambda: deliveries_enqueue(work))
    return delivery
