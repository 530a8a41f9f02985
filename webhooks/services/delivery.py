"""Webhook delivery: the drain that claims due deliveries and has them POSTed signed (many at
once, within each receiver's bound and each endpoint's limits: ``drain``, ``webhooks.transport``)
and settled as their attempts end (``outcomes``: the outbox's one retry policy,
``docplatform.events.retries``); a retry's task; purging finished deliveries."""

import time
from datetime import timedelta

from django.conf import settings
from django.utils import timezone

from docplatform.events.leases import ClaimReads, deliveries_start_due
from docplatform.events.models import Delivery
from docplatform.events.outbox import drain_release, drain_request
from docplatform.events.retention import rows_purge

from ..rules import WEBHOOK_CONSUMER
from ..selectors import is_delivery_waiting
from .drain import Drain

#: What a claim reads with each delivery: its event and installation (with the organization
#: installation above it); never the integration's code, nor the installations' encrypted
#: credentials and API token.
CLAIM_READS = ClaimReads(
    related=("event", "installation__parent"),
    deferred=tuple(
        f"{installation}__{column}"
        for installation in ("installation", "installation__parent")
        for column in ("credentials", "api_token")
    ),
)


#: Settled deliveries deleted per statement by the retention purge.
PURGE_BATCH = 1000
#: The drains that share a backlog that its endpoints' limits hold back (``_parallel_drains``):
#: two share an endpoint's slots, each passing its own on, in two worker processes (the one
#: drain's process was the bound); more would split them into shares too small to keep busy.
HELD_BACK_DRAINS = 2


def webhook_deliver(delivery_id: int) -> None:
    """A delivery's retry at its countdown (the consumer's ``task_name``, queued with the
    delivery's id by the outbox): the drain attempts it, within its receiver's bound, so
    retries to a slow receiver take no more senders than first attempts (nor a worker slot
    each). While the delivery still waits (open, held by no worker) a drain is asked for,
    unless one is queued or running, which claims it: it is due now, and a drain claims the
    oldest due deliveries first. A delivery a drain took meanwhile, settled, or cancelled
    asks for nothing."""
    if is_delivery_waiting(delivery_id):
        drain_request(WEBHOOK_CONSUMER)


def webhook_deliver_due(rank: int = 0) -> int:
    """The drain: attempt every due webhook delivery until a claim finds none (or
    ``WEBHOOK_DRAIN_SECONDS`` passed: then a new drain takes over). It holds up to
    ``WEBHOOK_BATCH_SIZE`` deliveries, POSTs them at once within each receiver's bound,
    settles each as its attempt ends (those that end together, together) and claims more as
    half its window frees, so a slow receiver holds up only its own deliveries. Until it
    caught up, its drain request stays set, so what commits meanwhile joins it (within
    ``DRAIN_POLL_SECONDS``) instead of queueing another task. A drain whose first claim is
    full asks another worker slot to share the backlog (``rank`` counts the drains before it,
    up to ``_parallel_drains``). Once caught up, it claims what committed since at each turn.
    Returns how many deliveries it claimed to attempt (a delivery postponed and claimed again
    counts once)."""
    size = settings.WEBHOOK_BATCH_SIZE
    deadline = time.monotonic() + settings.WEBHOOK_DRAIN_SECONDS
    drain = Drain()
    claimed_so_far, caught_up, released = 0, True, False
    while True:
        free = size - drain.holding
        claimed = 0
        if free > 0 and (caught_up or 2 * free >= size):
            claimed, deliveries = deliveries_start_due(
                WEBHOOK_CONSUMER, limit=free, reads=CLAIM_READS, skip=drain.attempting
            )
            first_full = claimed == size and not claimed_so_far
            claimed_so_far += claimed
            caught_up = claimed < free
            drain.start(deliveries)
            if first_full and rank + 1 < _parallel_drains(drain, claimed):
                drain_request(WEBHOOK_CONSUMER, force=True, args=[rank + 1])
        if time.monotonic() > deadline:
            drain.finish()
            drain_release(WEBHOOK_CONSUMER)
            drain_request(WEBHOOK_CONSUMER)  # the next drain takes over
            return claimed_so_far - drain.reclaimed
        drain.step(wait=0.0 if claimed and not caught_up else drain.idle_wait())
        if claimed or drain.busy or drain.postponed_pending():
            continue
        if released:
            return claimed_so_far - drain.reclaimed
        drain_release(WEBHOOK_CONSUMER)  # then one more claim, for what committed before
        released = True


def _parallel_drains(drain: Drain, claimed: int) -> int:
    """How many drains may share the backlog: ``WEBHOOK_PARALLEL_DRAINS``, or
    ``HELD_BACK_DRAINS`` when its endpoints' limits held back most of the first claim."""
    if 2 * len(drain.holds) > claimed:
        return min(HELD_BACK_DRAINS, settings.WEBHOOK_PARALLEL_DRAINS)
    return settings.WEBHOOK_PARALLEL_DRAINS


def deliveries_purge() -> int:
    """Delete settled webhook deliveries (and their attempts) past the retention period, a
    batch at a time (``Delivery.OPEN_STATUSES`` is what is not settled: one rule with the
    events' purge, ``docplatform.events.retention``); returns how many deliveries."""
    cutoff = timezone.now() - timedelta(days=settings.WEBHOOK_RETENTION_DAYS)
    settled = Delivery.objects.filter(consumer=WEBHOOK_CONSUMER, completed_at__lt=cutoff).exclude(
        status__in=Delivery.OPEN_STATUSES
    )
    return rows_purge(settled, batch=PURGE_BATCH)
