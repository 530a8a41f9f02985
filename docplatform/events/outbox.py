"""The outbox: firing events, and the one API consumers use to work through deliveries.

``fire(...)`` writes the event and one delivery per recipient (as the registered routers
say) in the caller's transaction; after commit, Celery tasks take the deliveries to their
consumer (as registered): a task per delivery, or one drain per burst for a batch consumer,
which claims the due deliveries itself. A periodic sweeper re-queues deliveries that were
committed but never queued (broker down) or whose worker died, so nothing is lost.

A consumer works through a delivery in three steps, all here: **claim** it (a lease, so one
worker at a time; ``delivery_start`` / ``deliveries_start_due`` also cancel what the routers
no longer want), do its work, then **settle** it with a ``Result`` (succeeded, failed,
cancelled, retry after a delay, or postponed): the outbox writes the row with the consumer's
log rows, only while the lease is still held, and queues the retry. A consumer never writes a
delivery row itself.
"""

import logging
import uuid
from collections import defaultdict
from collections.abc import Collection
from dataclasses import dataclass
from datetime import datetime, timedelta
from functools import partial

from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import connection, transaction
from django.db.models import Q, QuerySet
from django.utils import timezone

from .catalogue import payload as catalogue_payload
from .models import Delivery, DrainRequest, Event
from .publisher import BrokerUnavailable, publish, raise_if_broker_down
from .registry import consumer_for, consumer_named, routers

logger = logging.getLogger(__name__)

ENQUEUE_EVENT_TASK = "docplatform.tasks.enqueue_event_deliveries"


# --- firing -----------------------------------------------------------------------------------


def fire(
    event_type: str, *, organization, space=None, site=None, installation=None, **fields
) -> Event:
    """Record an event and its deliveries in the current transaction; queue them after commit.

    ``fields`` are the payload's, as the catalogue defines them for ``event_type``.
    ``installation`` addresses the event (a setup event, a ping) to that one installation;
    other events go to every recipient the routers find.
    """
    event = Event.objects.create(
        type=event_type,
        organization=organization,
        space=space,
        site=site,
        payload=catalogue_payload(event_type, **fields),
    )
    _deliveries_create(event, installation)
    return event


def payload_for(event: Event, delivery: Delivery) -> dict:
    """The JSON body an installation receives for one delivery."""
    return {
        "type": event.type,
        "eventId": str(delivery.event_uuid),
        "installationId": delivery.installation_id,
        **event.payload,
    }


def _deliveries_create(event: Event, installation) -> list[Delivery]:
    """One delivery per recipient, in the caller's transaction; queued after commit."""
    deliveries = []
    now = timezone.now()
    for router in routers():
        for recipient in router.recipients(event, installation):
            consumer = consumer_for(recipient)
            if consumer.wants(recipient, event.type):
                deliveries.append(
                    Delivery(
                        event=event,
                        installation_id=recipient.installation_id,
                        consumer=consumer.name,
                        event_uuid=uuid.uuid4(),
                        # A drained consumer's delivery is queued by the drain this commit
                        # requests.
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
    at once and a large fan-out is handed to one task.

    A broker that fails or hangs costs the commit one bounded wait (see ``publisher``) and one
    warning; what was not sent is the sweeper's.
    """
    try:
        drained = {name for _, name in work if consumer_named(name).drain_task_name}
        for name in sorted(drained):
            _drain_send(name)
        work = [(delivery_id, name) for delivery_id, name in work if name not in drained]
        if len(work) <= settings.DELIVERY_INLINE_FANOUT:
            _send(work, countdown=None, sent=[])
        else:
            publish(ENQUEUE_EVENT_TASK, args=[event_id])
    except BrokerUnavailable as exc:
        logger.warning(
            "broker unavailable (%s): event %s's deliveries are left to the sweeper", exc, event_id
        )


# --- queueing ---------------------------------------------------------------------------------


def deliveries_enqueue(work: list[tuple[int, str]], *, countdown: float | None = None) -> int:
    """Send each (delivery id, consumer name) to its consumer and mark it queued: one drain per
    drained consumer (unless a ``countdown`` asks for the delivery's own task), else a task
    per delivery.

    A broker failure is logged (once), not raised: the rows stay unqueued and the sweeper
    sends them once the broker is back. Returns how many were sent.
    """
    sent: list[int] = []
    try:
        _send(work, countdown=countdown, sent=sent)
    except BrokerUnavailable as exc:
        logger.warning(
            "broker unavailable (%s): %d deliveries are left to the sweeper",
            exc,
            len(work) - len(sent),
        )
    return len(sent)


def _send(work: list[tuple[int, str]], *, countdown: float | None, sent: list[int]) -> None:
    """deliveries_enqueue's work: appends to ``sent`` what was sent (and marks it queued), and
    raises BrokerUnavailable at the first publish that fails."""
    drained = set()
    if countdown is None:
        drained = {name for _, name in work if consumer_named(name).drain_task_name}
    try:
        for name in sorted(drained):
            if _drain_send(name, force=True):
                sent += [delivery_id for delivery_id, consumer in work if consumer == name]
        for delivery_id, name in work:
            if name not in drained:
                task = consumer_named(name).task_name
                publish(task, args=[delivery_id], countdown=countdown)
                sent.append(delivery_id)
    finally:
        if sent:
            Delivery.objects.filter(pk__in=sent).update(queued_at=timezone.now())


def deliveries_enqueue_for_event(event_id: str) -> int:
    """Queue an event's deliveries not queued yet (a large fan-out, handed to a task)."""
    work = list(
        Delivery.objects.filter(event_id=event_id, queued_at__isnull=True).values_list(
            "pk", "consumer"
        )
    )
    return deliveries_enqueue(work)


def drain_request(consumer: str, *, force: bool = False, args=()) -> bool:
    """Queue a drain of the consumer's due deliveries, unless one is queued, or running and
    not yet caught up (it takes what commits meanwhile). ``force`` sends one whatever the
    flag says (the sweeper's way: a flag may be stale, and a drain with a backlog asks for
    help, passing the drain task's ``args``). A broker failure is logged, not raised.
    Returns whether a drain was sent.
    """
    try:
        return _drain_send(consumer, force=force, args=args)
    except BrokerUnavailable as exc:
        logger.warning(
            "broker unavailable (%s): %s deliveries are left to the sweeper", exc, consumer
        )
        return False


def _drain_send(consumer: str, *, force: bool = False, args=()) -> bool:
    """drain_request's work, raising BrokerUnavailable.

    **The drain request flag** (``DrainRequest.requested_at``) says whether a drain was sent
    and has not caught up yet: then a commit sends none. It is set only once the drain is
    known to be sent. Before the publish, the flag holds a time in the future (the publish's
    deadline: a publish in progress); a producer finding that takes over and sends a drain of
    its own, so a publish that hangs or fails in one process never holds up the others'
    deliveries (a drain sent twice finds nothing the second time). After the publish, the
    flag holds the time it was sent, unless a drain cleared it meanwhile; a failed publish
    clears it. Setting and each of these changes are one statement each.
    """
    raise_if_broker_down()
    now = timezone.now()
    publishing = now + timedelta(seconds=4 * settings.BROKER_TIMEOUT_SECONDS)
    if not _drain_flag_set(consumer, publishing, now=now, force=force):
        return False
    mine = DrainRequest.objects.filter(consumer=consumer, requested_at=publishing)
    try:
        publish(consumer_named(consumer).drain_task_name, args=args)
    except BrokerUnavailable:
        mine.update(requested_at=None)
        raise
    mine.update(requested_at=timezone.now())
    return True


def _drain_flag_set(consumer: str, publishing: datetime, *, now: datetime, force: bool) -> bool:
    """Mark the consumer's drain as being published (``publishing``: its deadline) if no
    drain was sent (the flag is clear, or another publish is in progress), or if ``force``;
    whether this call marked it. One upsert: a missing row is no obstacle."""
    table = connection.ops.quote_name(DrainRequest._meta.db_table)
    adapt = connection.ops.adapt_datetimefield_value
    when = "" if force else f"WHERE {table}.requested_at IS NULL OR {table}.requested_at > %s "
    parameters = [consumer, adapt(publishing)] + ([] if force else [adapt(now)])
    with connection.cursor() as cursor:
        cursor.execute(
            f"INSERT INTO {table} (consumer, requested_at) VALUES (%s, %s) "  # noqa: S608
            f"ON CONFLICT (consumer) DO UPDATE SET requested_at = excluded.requested_at "
            f"{when}RETURNING consumer",
            parameters,
        )
        return cursor.fetchone() is not None


def drain_release(consumer: str) -> None:
    """Clear the drain request flag: from now on a commit queues a new drain. A drain calls
    it once it caught up, then claims once more for what committed before."""
    DrainRequest.objects.filter(consumer=consumer).update(requested_at=None)


def deliveries_sweep() -> int:
    """The sweeper: re-queue open deliveries that nobody is working on and that are overdue.

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


# --- claiming (the lease) ---------------------------------------------------------------------


@dataclass(frozen=True)
class ClaimReads:
    """What a consumer reads with the deliveries it claims: the relations joined in, and the
    columns of those it leaves unread."""

    related: tuple[str, ...] = ("event", "installation")
    deferred: tuple[str, ...] = ()


def delivery_claim(delivery_id: int, *, reads=ClaimReads()) -> Delivery | None:
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


def deliveries_claim_due(
    consumer: str,
    *,
    limit: int,
    reads=ClaimReads(),
    skip: Collection[int] = (),
) -> list[Delivery]:
    """Take the lease on up to ``limit`` due deliveries of a consumer, oldest first: open, held
    by no worker, and not waiting for a retry's time; never those in ``skip`` (the caller's
    own, still being attempted). Concurrent drains skip each other's rows (FOR UPDATE SKIP
    LOCKED; SQLite's transactions are serial anyway)."""
    now = timezone.now()
    due = (
        Delivery.objects.filter(consumer=consumer, status__in=Delivery.OPEN_STATUSES)
        .filter(Q(lease_expires_at__isnull=True) | Q(lease_expires_at__lt=now))
        .filter(Q(next_attempt_at__isnull=True) | Q(next_attempt_at__lte=now))
        .order_by("pk")
    )
    if skip:
        due = due.exclude(pk__in=list(skip))
    ids = _lease(due, limit, until=now + timedelta(seconds=settings.DELIVERY_LEASE_SECONDS))
    if not ids:
        return []
    return list(_claimed(reads).filter(pk__in=ids).order_by("pk"))


def _lease(due: QuerySet, limit: int, *, until: datetime) -> list[int]:
    """Set the lease of the first ``limit`` of ``due`` in one statement, and their ids: an
    UPDATE whose subquery locks them, skipping rows other drains locked (FOR UPDATE SKIP
    LOCKED, where the database has it: SQLite's writes are serial anyway). One round trip,
    where a transaction of a SELECT and an UPDATE took four: a drain claims often. On
    PostgreSQL the ids are an array (``= ANY(ARRAY(...))``): with ``IN`` the planner joins
    the subquery against a scan of the whole table."""
    subquery, parameters = due.values("pk")[:limit].query.sql_with_params()
    chosen = f"IN ({subquery})"
    if connection.features.has_select_for_update_skip_locked:
        chosen = f"= ANY(ARRAY({subquery} FOR UPDATE SKIP LOCKED))"
    table = connection.ops.quote_name(Delivery._meta.db_table)
    pk = connection.ops.quote_name(Delivery._meta.pk.column)
    with connection.cursor() as cursor:
        cursor.execute(
            f"UPDATE {table} SET lease_expires_at = %s "  # noqa: S608
            f"WHERE {pk} {chosen} RETURNING {pk}",
            [connection.ops.adapt_datetimefield_value(until), *parameters],
        )
        return [row[0] for row in cursor.fetchall()]


def deliveries_held_before(delivery: Delivery, **same) -> int:
    """How many deliveries of ``delivery``'s consumer that share ``same`` (field lookups) are
    held by workers now and were claimed before it (an earlier lease; the same lease: a
    smaller id): what a consumer bounds its work in flight by, across processes."""
    lease = delivery.lease_expires_at
    return (
        Delivery.objects.filter(
            consumer=delivery.consumer,
            status__in=Delivery.OPEN_STATUSES,
            lease_expires_at__gt=timezone.now(),
            **same,
        )
        .filter(Q(lease_expires_at__lt=lease) | Q(lease_expires_at=lease, pk__lt=delivery.pk))
        .count()
    )


def _claimed(reads: ClaimReads) -> QuerySet:
    return Delivery.objects.select_related(*reads.related).defer(*reads.deferred)


def delivery_start(delivery_id: int, *, reads=ClaimReads()) -> Delivery | None:
    """Claim an open delivery for one attempt; None when there is nothing to do: it is closed,
    another worker holds it, or a router no longer wants it (then it is cancelled).
    ``reads`` narrows what is read with it (see ClaimReads)."""
    delivery = delivery_claim(delivery_id, reads=reads)
    return _still_wanted([delivery])[0] if delivery else None


def deliveries_start_due(consumer: str, *, limit: int, reads=ClaimReads(), skip=()):
    """Claim a batch of due deliveries (see deliveries_claim_due) and cancel those the routers
    no longer want. Returns (claimed count, deliveries to attempt)."""
    claimed = deliveries_claim_due(consumer, limit=limit, reads=reads, skip=skip)
    return len(claimed), [d for d in _still_wanted(claimed) if d is not None]


def _still_wanted(deliveries: list[Delivery]) -> list[Delivery | None]:
    """Each claimed delivery, or None in its place when it was cancelled because a router no
    longer wants it (its installation was paused meanwhile)."""
    kept, cancelled = [], []
    for delivery in deliveries:
        if all(router.still_wanted(delivery) for router in routers()):
            kept.append(delivery)
        else:
            cancelled.append((delivery, Result.cancelled(reason="installation paused")))
            kept.append(None)
    if cancelled:
        deliveries_settle(cancelled)
    return kept


# --- settling ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class Result:
    """What a consumer's work on a claimed delivery came to; ``deliveries_settle`` writes it.

    ``attempts``: the delivery's attempt count in its chain after this work (None: unchanged,
    nothing was attempted). ``retry_in``: seconds until the retry of a ``retrying`` result
    (or until a postponed delivery is due again). ``at``: when a final result was reached
    (default: when it is settled). ``log``: the consumer's own rows recording the work (unsaved
    model instances, an attempt log), written with the delivery's new state or not at all.
    ``status`` None: postponed, nothing attempted; ``requeue``: its task is queued at
    ``retry_in`` (a drain that postpones a delivery comes back to it itself).
    """

    status: str | None
    attempts: int | None = None
    outcome: str = ""
    error: str = ""
    duration_ms: int | None = None
    retry_in: float | None = None
    at: datetime | None = None
    log: tuple = ()
    requeue: bool = True

    @classmethod
    def succeeded(cls, *, outcome: str = "", attempts=None, duration_ms=None, at=None, log=()):
        return cls(
            Delivery.Status.SUCCEEDED,
            attempts=attempts,
            outcome=outcome,
            duration_ms=duration_ms,
            at=at,
            log=tuple(log),
        )

    @classmethod
    def failed(
        cls, *, error: str, outcome: str = "", attempts=None, duration_ms=None, at=None, log=()
    ):
        return cls(
            Delivery.Status.FAILED,
            attempts=attempts,
            outcome=outcome,
            error=error,
            duration_ms=duration_ms,
            at=at,
            log=tuple(log),
        )

    @classmethod
    def retry(cls, *, retry_in: float, error: str, attempts=None, duration_ms=None, log=()):
        return cls(
            Delivery.Status.RETRYING,
            attempts=attempts,
            error=error,
            duration_ms=duration_ms,
            retry_in=retry_in,
            log=tuple(log),
        )

    @classmethod
    def cancelled(cls, *, reason: str):
        return cls(Delivery.Status.CANCELLED, outcome=reason)

    @classmethod
    def postponed(cls, *, retry_in: float, requeue: bool):
        """Not attempted now (its receiver is busy): the lease is given back and the delivery
        is due again in ``retry_in`` seconds, its status and attempts unchanged."""
        return cls(None, retry_in=retry_in, requeue=requeue)

    @property
    def queues_task(self) -> bool:
        """Whether settling queues the delivery's task at ``retry_in``."""
        return self.requeue and self.status in (None, Delivery.Status.RETRYING)

    def changes(self, now: datetime) -> dict:
        """The delivery's columns this result sets (the lease is released in every case)."""
        changes = {"lease_expires_at": None}
        if self.status is None:
            return changes | {"next_attempt_at": now + timedelta(seconds=self.retry_in or 0.0)}
        changes |= {"status": self.status, "last_error": self.error}
        if self.status == Delivery.Status.RETRYING:
            changes["next_attempt_at"] = now + timedelta(seconds=self.retry_in or 0.0)
        else:
            changes |= {
                "outcome": self.outcome[:200],
                "next_attempt_at": None,
                "completed_at": self.at or now,
            }
        if self.attempts is not None:
            changes["attempts"] = self.attempts
        if self.duration_ms is not None:
            changes["duration_ms"] = self.duration_ms
        return changes


def _held(ids: list[int], lease: datetime | None) -> QuerySet:
    """The deliveries still held with ``lease``; with none (settled without a claim: an
    operator's action), those still open that no worker holds."""
    if lease is None:
        return Delivery.objects.filter(
            pk__in=ids, lease_expires_at__isnull=True, status__in=Delivery.OPEN_STATUSES
        )
    return Delivery.objects.filter(pk__in=ids, lease_expires_at=lease)


class _LeaseLost(Exception):
    """A group of deliveries settled in one statement held a delivery whose lease was lost."""


def delivery_settle(delivery: Delivery, result: Result) -> bool:
    """Settle one delivery (see deliveries_settle); whether its lease was still held."""
    return bool(deliveries_settle([(delivery, result)]))


def deliveries_settle(results: list[tuple[Delivery, Result]]) -> list[Delivery]:
    """Write what consumers' work came to, then queue each retry at its countdown.

    **The lease rule**: a result is written only while the worker still holds the lease it
    claimed the delivery with (``lease_expires_at`` as claimed, checked in the same UPDATE;
    a delivery settled without a claim must be open and held by no worker):
    a delivery whose lease ran out and was claimed again is settled by its new holder only,
    once, and the late result is dropped (logged). Each delivery's new state and its ``log``
    rows are written in one transaction, so a failure loses both or neither. Deliveries with
    the same lease and the same new state are one UPDATE. The deliveries settled are brought
    up to date and returned.
    """
    now = timezone.now()
    try:
        settled = _settle_at_once(results, now)
    except _LeaseLost:  # rare: settle them one by one to learn which are still held
        settled = []
        for item in results:
            settled += _settle_at_once([item], now)
    if len(settled) < len(results):
        held = {delivery.pk for delivery, _ in settled}
        lost = [delivery.pk for delivery, _ in results if delivery.pk not in held]
        logger.warning(
            "deliveries %s: lease taken over (or settled already), their late results dropped",
            lost,
        )
    retries = []
    for delivery, result in settled:
        for field, value in result.changes(now).items():
            setattr(delivery, field, value)
        if result.queues_task:
            retries.append((delivery, result.retry_in or 0.0))
    for delivery, countdown in retries:
        deliveries_enqueue([(delivery.pk, delivery.consumer)], countdown=max(countdown, 0.0))
    return [delivery for delivery, _ in settled]


def _settle_at_once(results, now) -> list[tuple[Delivery, Result]]:
    """Settle in one transaction what is still held; a delivery found not held is left out
    when settled alone, and raises _LeaseLost (nothing written) when in a group."""
    groups = defaultdict(list)
    for delivery, result in results:
        changes = tuple(sorted(result.changes(now).items()))
        groups[(delivery.lease_expires_at, changes)].append((delivery, result))
    settled = []
    with transaction.atomic():
        for (lease, changes), items in groups.items():
            ids = [delivery.pk for delivery, _ in items]
            held = _held(ids, lease).update(**dict(changes))
            if held == len(ids):
                settled += items
            elif len(ids) > 1:  # which of them were lost is unknown: undo, and settle each
                raise _LeaseLost
        rows = defaultdict(list)
        for _, result in settled:
            for row in result.log:
                rows[type(row)].append(row)
        for model, objects in rows.items():
            model.objects.bulk_create(objects)
    return settled


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
