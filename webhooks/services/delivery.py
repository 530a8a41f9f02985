"""Webhook delivery: claim due deliveries, have them POSTed signed (many at once, a bounded
number per receiver: ``webhooks.transport``), classify each attempt's outcome and settle its
delivery as the attempt ends (done, or retried: the outbox's one retry policy,
``docplatform.events.retries``) with the attempt's log row; purging finished deliveries."""

import dataclasses
import json
import logging
import time
from collections import defaultdict
from concurrent.futures import FIRST_COMPLETED, Future
from concurrent.futures import wait as futures_wait
from datetime import timedelta

from django.conf import settings
from django.db import DatabaseError
from django.db.models import Q
from django.utils import timezone

from docplatform import events
from docplatform.events import retries
from docplatform.events.leases import ClaimReads, Result, deliveries_settle, deliveries_start_due
from docplatform.events.models import Delivery
from docplatform.events.outbox import drain_release, drain_request

from ..models import DeliveryAttempt
from ..rules import WEBHOOK_CONSUMER
from ..selectors import is_delivery_waiting
from ..transport import limits
from ..transport.endpoint_slots import DrainSlots, Slot
from ..transport.outbound import UnsafeURL, check_url
from ..transport.receivers import slots
from ..transport.sending import REFUSED, Job, senders
from .signing_secrets import signing_secrets_for

logger = logging.getLogger(__name__)

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
#: How long a drain with POSTs in flight and nothing more to claim waits for one to end
#: before it claims again (what committed meanwhile joins it within this time).
DRAIN_POLL_SECONDS = 0.05
#: How long an ended attempt may wait to be settled with others that end about together.
SETTLE_LINGER_SECONDS = 0.05
#: How long a claimed delivery waits in the drain for a slot of its receiver before it is
#: postponed (its receiver is slow: it must not take the room of others).
SLOT_WAIT_SECONDS = 0.1
#: How often a drain holding deliveries its endpoints' limits held back asks again: slots
#: other workers give back are taken within this time, not a poll later.
HELD_POLL_SECONDS = 0.005


def longest_hold() -> float:
    """The longest a drain holds a delivery it claimed: a wait for its receiver's slot, the
    attempt to its deadline (connecting included), then the wait to settle with others."""
    return SLOT_WAIT_SECONDS + settings.WEBHOOK_RESPONSE_TIMEOUT + SETTLE_LINGER_SECONDS


def classify_response(status_code: int | None) -> str:
    """The one rule for a delivery attempt's outcome, in the retry policy's terms
    (``docplatform.events.retries``): ``succeeded``, ``retry`` or ``failed``.

    ``None`` stands for a network error or a timeout. 2xx succeeds; 429, 5xx and network
    errors are retried; 3xx (redirects are never followed) and other 4xx fail at once.
    """
    if status_code is None:
        return retries.RETRY
    if 200 <= status_code < 300:
        return retries.SUCCEEDED
    if status_code == 429 or 500 <= status_code < 600:
        return retries.RETRY
    return retries.FAILED


def retry_delay(failed_attempt: int) -> float:
    """Seconds before a webhook's retry after attempt ``failed_attempt`` (1-based): the retry
    policy's schedule on ``WEBHOOK_RETRY_BASE_DELAY`` (1x, 2x, 4x it, +/-10 %)."""
    return retries.retry_delay(settings.WEBHOOK_RETRY_BASE_DELAY, failed_attempt)


def request_body(delivery: Delivery) -> bytes:
    """The JSON body: the same bytes on every attempt and redelivery of the delivery."""
    payload = events.payload_for(delivery.event, delivery)
    return json.dumps(payload, separators=(",", ":"), ensure_ascii=False).encode()


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
    up to ``WEBHOOK_PARALLEL_DRAINS``), unless its endpoints' limits held most of it back.
    Returns how many deliveries it claimed to attempt (a delivery postponed and claimed again
    counts once)."""
    size = settings.WEBHOOK_BATCH_SIZE
    deadline = time.monotonic() + settings.WEBHOOK_DRAIN_SECONDS
    drain = _Drain()
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
            # Help shares a backlog, not an endpoint's limit: another drain would only split
            # the slots of the endpoints that hold back most of what it claimed.
            held_back = 2 * len(drain.holds) > claimed
            if first_full and not held_back and rank + 1 < settings.WEBHOOK_PARALLEL_DRAINS:
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


def _jobs(deliveries: list[Delivery], targets: dict) -> list[Job]:
    """The deliveries' jobs: one secrets query, one resolution per URL (``targets`` keeps
    them for the caller's next claims)."""
    secrets = signing_secrets_for([delivery.installation for delivery in deliveries])
    jobs = []
    for delivery in deliveries:
        url = delivery.installation.configuration.get("url")
        if url not in targets:
            try:
                targets[url] = check_url(url)
            except UnsafeURL as exc:
                targets[url] = exc
        body = request_body(delivery)
        jobs.append(Job(delivery, body, secrets[delivery.installation_id], targets[url]))
    return jobs


class _Drain:
    """A drain's deliveries: the attempts in flight in the sender threads, those waiting for
    a slot of their receiver (a while; then postponed, and the drain comes back to them when
    they are due), and the attempts that ended, to settle."""

    def __init__(self):
        self.targets: dict = {}  # one resolution per URL and drain
        self.endpoint_slots = DrainSlots()  # of its endpoints' limits
        self.futures: dict[Future, Job] = {}
        self.leases: dict[Future, Slot] = {}  # each POST's slot of its endpoint's limits
        self.holds: dict[int, tuple[limits.Grant, limits.Limits]] = {}  # held back, by id
        self.waiting: list[tuple[float, Job]] = []  # (since, job), in claim order
        self.ended: list[tuple[Delivery, DeliveryAttempt]] = []
        self.ended_since = 0.0
        self.postponed: list[Delivery] = []
        self.reclaimed = 0  # claims of deliveries it had postponed
        self.postponed_until = 0.0  # time.monotonic() when the last one comes due

    @property
    def holding(self) -> int:
        """The deliveries it holds that take room in its window: in flight or waiting."""
        return len(self.futures) + len(self.waiting)

    @property
    def attempting(self) -> list[int]:
        """The deliveries it holds and has not settled (should a lease run out meanwhile, the
        drain does not claim them again)."""
        jobs = [*self.futures.values(), *(job for _, job in self.waiting)]
        return [job.delivery.pk for job in jobs] + [delivery.pk for delivery, _ in self.ended]

    @property
    def busy(self) -> bool:
        return self.holding > 0 or bool(self.ended) or time.monotonic() < self.postponed_until

    def postponed_pending(self) -> bool:
        """Whether a delivery it postponed still waits for its time (the drain stays for it)."""
        if not self.postponed:
            return False
        return self._still_postponed().filter(next_attempt_at__gt=timezone.now()).exists()

    def _still_postponed(self):
        """The deliveries it postponed, still as it left them (not claimed again since)."""
        match = Q(pk__in=[])
        for delivery in self.postponed:
            match |= Q(pk=delivery.pk, next_attempt_at=delivery.next_attempt_at)
        return Delivery.objects.filter(
            match, lease_expires_at=None, status__in=Delivery.OPEN_STATUSES
        )

    def start(self, deliveries: list[Delivery]) -> None:
        """Attempt the claimed deliveries: each is POSTed in a sender thread when its receiver
        has a slot; a refused URL's attempt (nothing sent) ends at once."""
        if not deliveries:
            return
        claimed = {delivery.pk for delivery in deliveries}
        still = [delivery for delivery in self.postponed if delivery.pk not in claimed]
        self.reclaimed += len(self.postponed) - len(still)
        self.postponed = still
        now = time.monotonic()
        for job in _jobs(deliveries, self.targets):
            if job.receiver is None:
                self._ended(job.delivery, job.run(), now)
            else:
                self.waiting.append((now, job))
        self._dispatch()

    def step(self, *, wait: float) -> None:
        """Take the attempts that ended (waiting up to ``wait`` seconds for one), give their
        slots to waiting deliveries, postpone those that waited too long, and settle what
        ended once enough did, or a moment after the first."""
        if self.futures:
            done, _ = futures_wait(self.futures, timeout=wait, return_when=FIRST_COMPLETED)
        else:
            time.sleep(wait)
            done = ()
        now = time.monotonic()
        for future in done:
            job = self.futures.pop(future)
            self.endpoint_slots.ended(job.delivery.installation_id, self.leases.pop(future))
            try:
                attempt = future.result()
            except Exception:  # a fault of ours: the delivery is left to its lease
                logger.exception("webhook delivery %s: the attempt failed", job.delivery.pk)
                continue
            self._ended(job.delivery, attempt, now)
            wait = _retry_after(attempt)
            if wait:  # the receiver is waited for: nothing more is sent to it until then
                self.endpoint_slots.pause(job.delivery.installation_id, wait)
        self._dispatch()
        self._postpone_overdue(now)
        if self.ended and (
            len(self.ended) >= settings.WEBHOOK_BATCH_SIZE
            or now - self.ended_since >= SETTLE_LINGER_SECONDS
            or not self.futures
        ):
            ended, self.ended = self.ended, []
            _settle(ended)

    def idle_wait(self) -> float:
        """How long the drain may wait for an attempt to end before it has to act (claim,
        settle, or postpone). Nothing when it holds nothing and waits for nothing it
        postponed: it lets go of its drain request at once rather than keep it a while for
        what may commit, as an event committed while a drain dozed waited for it (the latency
        of a steady trickle of events: tens of ms)."""
        if not self.busy and not self.postponed:
            return 0.0
        now = time.monotonic()
        wakes = [now + DRAIN_POLL_SECONDS]
        if self.ended:
            wakes.append(self.ended_since + SETTLE_LINGER_SECONDS)
        if self.waiting:
            wakes.append(self.waiting[0][0] + SLOT_WAIT_SECONDS)
        if self.holds:
            wakes.append(now + HELD_POLL_SECONDS)
        return max(0.0, min(wakes) - now)

    def finish(self) -> None:
        """Before handing over: settle every attempt in flight, and make what waits or was
        postponed due now, so that the next drain takes it at once."""
        while self.futures:
            self.step(wait=DRAIN_POLL_SECONDS)
        self._postpone_overdue(float("inf"))
        _settle(self.ended)
        self.ended = []
        if self.postponed:
            now = timezone.now()
            self._still_postponed().filter(next_attempt_at__gt=now).update(next_attempt_at=now)

    def _ended(self, delivery: Delivery, attempt: DeliveryAttempt, now: float) -> None:
        if not self.ended:
            self.ended_since = now
        self.ended.append((delivery, attempt))

    def _dispatch(self) -> None:
        """POST the waiting deliveries, in claim order, whose receiver has a slot in this
        process and whose endpoint has one within its limits across every worker
        (``transport.endpoint_slots``: slots passed on, then one acquisition per endpoint).
        What a limit held back waits (a pause or a long wait: postponed at once); the slots
        not passed on are given back."""
        ready = defaultdict(list)
        for _, job in self.waiting:
            if slots.take(job.receiver):
                ready[job.delivery.installation_id].append(job)
        sent = set()
        for endpoint, jobs in ready.items():
            endpoint_limits = limits.limits_of(jobs[0].delivery.installation.configuration)
            taken, grant = self.endpoint_slots.take(endpoint, endpoint_limits, len(jobs))
            for job, slot in zip(jobs, taken, strict=False):
                self.holds.pop(job.delivery.pk, None)
                future = senders().submit(job.run)
                self.futures[future], self.leases[future] = job, slot
                sent.add(id(job))
            for job in jobs[len(taken) :]:
                slots.give_back_unused(job.receiver)
                self.holds[job.delivery.pk] = (grant, endpoint_limits)
        self.endpoint_slots.give_back_unused()
        self.waiting = [
            (self._held_since(job, since), job)
            for since, job in self.waiting
            if id(job) not in sent
        ]

    def _held_since(self, job: Job, since: float) -> float:
        """When a waiting job started waiting: long ago (postponed at the next step) when its
        endpoint's limits hold it back for longer than a slot is waited for; while this
        drain keeps getting slots of the endpoint (its share of a fast receiver's), since
        the last one, so a drain at its share works through what it claimed."""
        hold = self.holds.get(job.delivery.pk)
        if hold is None:
            return since
        if hold[0].wait > SLOT_WAIT_SECONDS:
            return float("-inf")
        return max(since, self.endpoint_slots.granted_at.get(job.delivery.installation_id, since))

    def _postpone_overdue(self, now: float) -> None:
        """Postpone the deliveries that waited ``SLOT_WAIT_SECONDS`` for a slot: their
        receiver is slow, and they must not take the room of others in the window."""
        overdue = [job for since, job in self.waiting if now - since >= SLOT_WAIT_SECONDS]
        if not overdue:
            return
        self.waiting = [(since, job) for since, job in self.waiting if job not in overdue]
        results = []
        for job in overdue:
            hold = self.holds.pop(job.delivery.pk, None)
            if hold is None:  # this process's bound on POSTs to its receiver
                delay = slots.postpone(job.receiver)
                reason = (
                    f"held back: {settings.WEBHOOK_RECEIVER_CONCURRENCY} in flight to "
                    f"{job.receiver} from this worker"
                )
            else:  # its endpoint's limits
                grant, endpoint_limits = hold
                delay = limits.postponement(
                    job.delivery.installation_id,
                    grant,
                    endpoint_limits,
                    slots.typical(job.receiver),
                )
                reason = grant.reason(endpoint_limits)
            result = Result.postponed(retry_in=delay, requeue=False, reason=reason)
            results.append((job.delivery, result))
        self.postponed += _settle_quietly(results)
        # Due at their next_attempt_at (the settle's clock): poll a little past the last one.
        last = max(result.retry_in for _, result in results) + DRAIN_POLL_SECONDS
        self.postponed_until = max(self.postponed_until, time.monotonic() + last)


def _settle(ended: list[tuple[Delivery, DeliveryAttempt]]) -> None:
    """Settle deliveries whose attempt ended, each attempt row written with its delivery's
    new state (see ``leases.deliveries_settle``)."""
    if ended:
        _settle_quietly([(delivery, _result(delivery, attempt)) for delivery, attempt in ended])


def _settle_quietly(results: list[tuple[Delivery, Result]]) -> list[Delivery]:
    """Settle; a database failure is logged, not raised: nothing of these results was
    written, and the deliveries come back when their lease runs out."""
    try:
        return deliveries_settle(results)
    except DatabaseError:
        logger.exception(
            "webhook deliveries %s: not settled, left to their lease",
            [delivery.pk for delivery, _ in results],
        )
        return []


def _result(delivery: Delivery, attempt: DeliveryAttempt) -> Result:
    """What the attempt makes of the delivery after the retry policy
    (``docplatform.events.retries``): done, or a retry after its delay. The attempt records
    the same: ``succeeded``, ``retry`` (with the delay) or ``failed`` (the last attempt of a
    delivery that failed); it is written with the delivery's new state."""
    number = attempt.number
    status_code = attempt.status_code
    refused = attempt.error.startswith(REFUSED)
    outcome = retries.FAILED if refused else classify_response(status_code)
    detail = attempt.error or (f"HTTP {status_code}" if status_code else "")
    attempt.outcome = retries.settle_outcome(outcome, number)
    if outcome == retries.SUCCEEDED:
        done = f"HTTP {status_code}"
    else:
        gave_up = " after the last retry" if outcome == retries.RETRY else ""
        done = f"{detail}{gave_up}"
    result = retries.settle_result(
        outcome,
        attempts=number,
        base_delay=settings.WEBHOOK_RETRY_BASE_DELAY,
        error=detail,
        done=done,
        log=[attempt],
    )
    wait = _retry_after(attempt)
    if wait is not None and attempt.outcome == retries.RETRY:
        # The receiver is waited for as it asked (up to 60 s), at least the policy's delay;
        # the attempt counts as one, as the policy counts every 429.
        asked = f"HTTP 429, held back as the receiver asked: Retry-After {wait:g} s"
        result = dataclasses.replace(result, retry_in=max(result.retry_in, wait), error=asked)
        attempt.error = asked
    if attempt.outcome == retries.RETRY:
        attempt.next_delay = result.retry_in
    return result


def _retry_after(attempt: DeliveryAttempt) -> float | None:
    """Seconds a 429 attempt's ``Retry-After`` asks to wait (at most 60), or None."""
    if attempt.status_code != 429:
        return None
    return limits.retry_after(attempt.response_headers)


def deliveries_purge() -> int:
    """Delete finished webhook deliveries (and their attempts) past the retention period."""
    cutoff = timezone.now() - timedelta(days=settings.WEBHOOK_RETENTION_DAYS)
    deleted, _ = Delivery.objects.filter(
        consumer=WEBHOOK_CONSUMER,
        status__in=[Delivery.Status.SUCCEEDED, Delivery.Status.FAILED, Delivery.Status.CANCELLED],
        completed_at__lt=cutoff,
    ).delete()
    return deleted
