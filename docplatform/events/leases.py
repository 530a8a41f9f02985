"""The outbox, the consumers' side: the one API consumers work through deliveries with.

A consumer works through a delivery in three steps, all here: **claim** it (a lease, so one
worker at a time; ``delivery_start`` / ``deliveries_start_due`` also cancel what the routers
no longer want), do its work, then **settle** it with a ``Result`` (succeeded, failed,
cancelled, retry after a delay, or postponed): the outbox writes the row with the consumer's
log rows, only while the lease is still held, and queues the retry. A consumer never writes a
delivery row itself. ``delivery_redeliver`` starts a finished delivery anew.
"""

import hashlib
import logging
from collections import Counter, defaultdict
from collections.abc import Collection
from dataclasses import dataclass
from datetime import datetime, timedelta

from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import connections, transaction
from django.db.models import Q, QuerySet
from django.utils import timezone

from ..observability.metrics import deliveries_settled
from ..queries import (
    Prepared,
    PreparedSQL,
    is_postgresql,
    stand_in,
    stand_in_time,
    stand_in_values,
    stand_ins,
    values_of,
)
from .models import Delivery
from .outbox import deliveries_enqueue
from .registry import routers

logger = logging.getLogger(__name__)


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
        .update(
            lease_expires_at=now + timedelta(seconds=settings.DELIVERY_LEASE_SECONDS),
            attempt_started_at=None,
        )
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
    LOCKED; SQLite's transactions are serial anyway).

    Two statements compiled once (``docplatform.queries``): the leases, then the read of
    what they took with its relations (none when nothing was due). Building and compiling
    them at each claim was most of a drain's wait before its first POST (benchmarks/
    RESULTS.md, "Issue 12"); one statement doing both costs PostgreSQL more to plan than
    the round trip it saves, and an empty claim pays it too."""
    now = timezone.now()
    until = now + timedelta(seconds=settings.DELIVERY_LEASE_SECONDS)
    leased = _lease_statement(limit).execute(
        {_CONSUMER: consumer, _NOW: now, _UNTIL: until, _SKIP: list(skip)}
    )
    if not leased:
        return []
    ids = [pk for (pk,) in leased]
    values = stand_in_values("id", ids, numbers=True)
    return _read_statement(reads, len(ids)).instances(values)


#: Stand-ins for a claim's values in its statements compiled once (lists: see values_of).
_CONSUMER, _SKIP = stand_in("consumer"), stand_in("skip")
_NOW, _UNTIL = stand_in_time(1), stand_in_time(2)
_lease_statements: dict[tuple[str, int], PreparedSQL] = {}
_read_statements: dict[tuple[str, ClaimReads, int], Prepared] = {}


def _lease_statement(limit: int) -> PreparedSQL:
    """Set the lease of the first ``limit`` due deliveries and return their ids, in one
    statement: an UPDATE whose subquery locks them (on the partial index
    ``delivery_due_idx``). On PostgreSQL it skips rows other drains locked, and the ids are
    an array (``= ANY(ARRAY(...))``): with ``IN`` the planner joins the subquery against a
    scan of the whole table. SQLite's writes are serial: nothing to skip."""
    alias = Delivery.objects.db
    if (alias, limit) not in _lease_statements:
        connection = connections[alias]
        due = (
            Delivery.objects.filter(consumer=_CONSUMER, status__in=Delivery.OPEN_STATUSES)
            .filter(Q(lease_expires_at__isnull=True) | Q(lease_expires_at__lt=_NOW))
            .filter(Q(next_attempt_at__isnull=True) | Q(next_attempt_at__lte=_NOW))
            .exclude(pk__in=values_of("skip", "bigint", using=alias))
            .order_by("pk")
        )
        subquery, parameters = due.values("pk")[:limit].query.sql_with_params()
        chosen = f"IN ({subquery})"
        if connection.vendor == "postgresql":
            chosen = f"= ANY(ARRAY({subquery} FOR UPDATE SKIP LOCKED))"
        table = connection.ops.quote_name(Delivery._meta.db_table)
        pk = connection.ops.quote_name(Delivery._meta.pk.column)
        _lease_statements[alias, limit] = PreparedSQL(
            f"UPDATE {table} SET lease_expires_at = %s, attempt_started_at = NULL "  # noqa: S608
            f"WHERE {pk} {chosen} RETURNING {pk}",
            [_UNTIL, *parameters],
            using=alias,
        )
    return _lease_statements[alias, limit]


def _read_statement(reads: ClaimReads, count: int) -> Prepared:
    """``count`` claimed deliveries, in id order, with what ``reads`` says."""
    key = (Delivery.objects.db, reads, count)
    if key not in _read_statements:
        ids = stand_ins("id", count, numbers=True)
        _read_statements[key] = Prepared(_claimed(reads).filter(pk__in=ids).order_by("pk"))
    return _read_statements[key]


def delivery_take_turn(delivery: Delivery, *, limit: int, **same) -> bool:
    """Begin the attempt of a claimed delivery if fewer than ``limit`` deliveries of its
    consumer that share ``same`` (field lookups) are being attempted now (held, their attempt
    begun): what a consumer bounds its work in flight by, across processes. False: not its
    turn (or its lease was lost); the caller postpones it. Settling it ends the attempt.

    The count and the turn are one transaction under a lock of the group (PostgreSQL: an
    advisory lock on the consumer and ``same``; SQLite's transactions are serial), so two
    workers never both take the last turn: counting leases taken earlier instead let two
    claims whose stamps were in one order and whose commits in the other both pass."""
    now = timezone.now()
    alias = Delivery.objects.db
    with transaction.atomic(using=alias):
        _lock_group(alias, delivery.consumer, same)
        in_flight = (
            Delivery.objects.filter(
                consumer=delivery.consumer,
                status__in=Delivery.OPEN_STATUSES,
                lease_expires_at__gt=now,
                attempt_started_at__isnull=False,
                **same,
            )
            .exclude(pk=delivery.pk)
            .count()
        )
        if in_flight >= limit:
            return False
        held = Delivery.objects.filter(
            pk=delivery.pk, lease_expires_at=delivery.lease_expires_at
        ).update(attempt_started_at=now)
    if held:
        delivery.attempt_started_at = now
    return bool(held)


def _lock_group(alias: str, consumer: str, same: dict) -> None:
    """Hold, until the transaction ends, PostgreSQL's advisory lock of a consumer's group of
    deliveries (a 64-bit key hashed from its name and ``same``). SQLite needs none: its
    transactions begin IMMEDIATE (docplatform.settings.database), one writer at a time."""
    if not is_postgresql(alias):
        return
    named = repr((consumer, sorted(same.items()))).encode()
    key = int.from_bytes(hashlib.blake2b(named, digest_size=8).digest(), "big", signed=True)
    with connections[alias].cursor() as cursor:
        cursor.execute("SELECT pg_advisory_xact_lock(%s)", [key])


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
    def postponed(cls, *, retry_in: float, requeue: bool, reason: str = ""):
        """Not attempted now (its receiver is busy): the lease is given back and the delivery
        is due again in ``retry_in`` seconds, its status and attempts unchanged; a ``reason``
        (what held it back) becomes its ``last_error``."""
        return cls(None, retry_in=retry_in, requeue=requeue, error=reason)

    @property
    def queues_task(self) -> bool:
        """Whether settling queues the delivery's task at ``retry_in``."""
        return self.requeue and self.status in (None, Delivery.Status.RETRYING)

    def changes(self, now: datetime) -> dict:
        """The delivery's columns this result sets (the lease is released in every case)."""
        changes = {"lease_expires_at": None, "attempt_started_at": None}
        if self.status is None:
            changes["next_attempt_at"] = now + timedelta(seconds=self.retry_in or 0.0)
            return changes | ({"last_error": self.error[:500]} if self.error else {})
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
    _count(settled)
    retries = []
    for delivery, result in settled:
        for field, value in result.changes(now).items():
            setattr(delivery, field, value)
        if result.queues_task:
            retries.append((delivery, result.retry_in or 0.0))
    for delivery, countdown in retries:
        deliveries_enqueue([(delivery.pk, delivery.consumer)], countdown=max(countdown, 0.0))
    return [delivery for delivery, _ in settled]


def _count(settled: list[tuple[Delivery, Result]]) -> None:
    """The deliveries settled, by consumer and what they came to (``/metrics``)."""
    counts = Counter(
        (delivery.consumer, result.status or "postponed") for delivery, result in settled
    )
    for (consumer, outcome), count in counts.items():
        deliveries_settled(consumer, outcome, count)


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


def redelivery_refusal(delivery: Delivery) -> str | None:
    """Why ``delivery`` cannot be sent again, or None: one still in progress, or one settled
    without any attempt (there was nothing to send it to: an integration without a script,
    or without a handler for the event), which a redelivery would settle the same way."""
    if delivery.status in Delivery.OPEN_STATUSES:
        return "the delivery is still in progress"
    if delivery.attempts == 0 and delivery.status == Delivery.Status.SUCCEEDED:
        return f"nothing was sent, so there is nothing to send again ({delivery.outcome})"
    return None


@transaction.atomic
def delivery_redeliver(delivery: Delivery) -> Delivery:
    """Send a finished delivery again: the same eventId, a new chain of attempts."""
    delivery = Delivery.objects.select_for_update(no_key=True).get(pk=delivery.pk)
    refusal = redelivery_refusal(delivery)
    if refusal:
        raise ValidationError({"status": [refusal]})
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
