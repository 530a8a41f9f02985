"""A drain's window of deliveries (``delivery.webhook_deliver_due`` runs it): the attempts in
flight in the sender threads, those waiting for a slot of their receiver (a while; then
postponed, and the drain comes back to them when they are due), and the attempts that ended,
to settle.

**Lanes.** The sender thread whose POST ended hands its endpoint's slot straight to the
drain's next delivery waiting for that endpoint, when the slot may be passed on
(``DrainSlots.may_pass``: young, no rate limit, the receiver has not asked to wait, the drain
within its share) and no older delivery of another endpoint waits for the same receiver's room
in this process, and POSTs it: a fast receiver's POSTs follow each other while the drain's
thread claims and settles, instead of each slot waiting for that thread's next turn (half of
which it spends waiting on PostgreSQL: benchmarks/RESULTS.md, "Issue 23"). Each attempt is
reported to the drain's thread as it ends, which settles it with the others.
"""

import itertools
import json
import logging
import threading
import time
from collections import defaultdict

from django.conf import settings
from django.db.models import Q
from django.utils import timezone

from docplatform import events
from docplatform.events.leases import Result
from docplatform.events.models import Delivery

from ..models import DeliveryAttempt
from ..transport import limits
from ..transport.endpoint_slots import DrainSlots, Slot
from ..transport.outbound import UnsafeURL, check_url
from ..transport.receivers import slots
from ..transport.sending import Job, senders
from . import outcomes
from .signing_secrets import signing_secrets_for

logger = logging.getLogger(__name__)

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


def request_body(delivery: Delivery) -> bytes:
    """The JSON body: the same bytes on every attempt and redelivery of the delivery."""
    payload = events.payload_for(delivery.event, delivery)
    return json.dumps(payload, separators=(",", ":"), ensure_ascii=False).encode()


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


def _endpoint(job: Job):
    return job.delivery.installation_id


class Drain:
    """One drain's deliveries. Its thread calls ``start``, ``step`` and ``finish``; the
    sender threads share with it (under ``lock``) what is in flight, what waits and what
    ended."""

    def __init__(self):
        self.targets: dict = {}  # one resolution per URL and drain
        self.endpoint_slots = DrainSlots()  # of its endpoints' limits
        self.lock = threading.Lock()
        self.reported = threading.Event()  # set when an attempt ended
        # Shared with the sender threads, under ``lock``:
        self.in_flight: dict[int, Job] = {}  # by id(job)
        self.waiting: list[tuple[int, float, Job]] = []  # (order, since, job), claim order
        self.holds: dict[int, tuple[limits.Grant, limits.Limits]] = {}  # held back, by id
        self.finished: list[tuple[Job, Slot | None, DeliveryAttempt | None]] = []
        # The drain's thread's own:
        self.order = itertools.count()
        self.ended: list[tuple[Delivery, DeliveryAttempt]] = []
        self.ended_since = 0.0
        self.postponed: list[Delivery] = []
        self.reclaimed = 0  # claims of deliveries it had postponed
        self.postponed_until = 0.0  # time.monotonic() when the last one comes due

    @property
    def holding(self) -> int:
        """The deliveries it holds that take room in its window: in flight or waiting."""
        return len(self.in_flight) + len(self.waiting)

    @property
    def attempting(self) -> list[int]:
        """The deliveries it holds and has not settled (should a lease run out meanwhile, the
        drain does not claim them again)."""
        with self.lock:
            jobs = [
                *self.in_flight.values(),
                *(job for _, _, job in self.waiting),
                *(job for job, _, _ in self.finished),
            ]
        return [job.delivery.pk for job in jobs] + [delivery.pk for delivery, _ in self.ended]

    @property
    def busy(self) -> bool:
        return (
            self.holding > 0
            or bool(self.ended or self.finished)
            or time.monotonic() < self.postponed_until
        )

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
        arrived = []
        for job in _jobs(deliveries, self.targets):
            if job.receiver is None:
                self._ended(job.delivery, job.run(), now)
            else:
                arrived.append((next(self.order), now, job))
        with self.lock:
            self.waiting += arrived
        self._dispatch()

    def step(self, *, wait: float) -> None:
        """Take the attempts that ended (waiting up to ``wait`` seconds for one), give their
        slots to waiting deliveries, postpone those that waited too long, and settle what
        ended once enough did, or a moment after the first."""
        if wait > 0:
            if self.in_flight:
                self.reported.wait(wait)
            else:
                time.sleep(wait)
        self.reported.clear()
        with self.lock:
            finished, self.finished = self.finished, []
        now = time.monotonic()
        for job, slot, attempt in finished:
            if slot is not None:
                self.endpoint_slots.ended(_endpoint(job), slot)
            if attempt is not None:
                self._ended(job.delivery, attempt, now)
        self._dispatch()
        self._postpone_overdue(now)
        if self.ended and (
            len(self.ended) >= settings.WEBHOOK_BATCH_SIZE
            or now - self.ended_since >= SETTLE_LINGER_SECONDS
            or not self.in_flight
        ):
            ended, self.ended = self.ended, []
            outcomes.settle(ended)

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
        with self.lock:
            if self.waiting:
                wakes.append(min(since for _, since, _ in self.waiting) + SLOT_WAIT_SECONDS)
            if self.holds:
                wakes.append(now + HELD_POLL_SECONDS)
        return max(0.0, min(wakes) - now)

    def finish(self) -> None:
        """Before handing over: settle every attempt in flight (what has not ended by the
        time an attempt must have is left to its lease), and make what waits or was
        postponed due now, so that the next drain takes it at once."""
        until = time.monotonic() + longest_hold()  # every attempt ends by then
        while (self.in_flight or self.finished) and time.monotonic() < until:
            self.step(wait=DRAIN_POLL_SECONDS)
        self._postpone_overdue(float("inf"))
        outcomes.settle(self.ended)
        self.ended = []
        if self.postponed:
            now = timezone.now()
            self._still_postponed().filter(next_attempt_at__gt=now).update(next_attempt_at=now)

    def _ended(self, delivery: Delivery, attempt: DeliveryAttempt, now: float) -> None:
        if not self.ended:
            self.ended_since = now
        self.ended.append((delivery, attempt))

    # --- in the sender threads ------------------------------------------------------------

    def _lane(self, job: Job, slot: Slot) -> None:
        """POST ``job`` within ``slot``, then the endpoint's next waiting job while the slot
        may be passed on (see the module's docstring)."""
        while job is not None:
            try:
                attempt = job.run()
            except Exception:  # a fault of ours: the delivery is left to its lease
                logger.exception("webhook delivery %s: the attempt failed", job.delivery.pk)
                attempt = None
            try:
                job, slot = self._report(job, slot, attempt)
            except Exception:  # a fault of ours: the job is not left counted in flight
                logger.exception("webhook delivery %s: not reported", job.delivery.pk)
                with self.lock:
                    self.in_flight.pop(id(job), None)
                    self.finished.append((job, slot, attempt))
                self.reported.set()
                return

    def _report(self, job: Job, slot: Slot, attempt: DeliveryAttempt | None):
        """Report the ended attempt; the job its slot passes to, if any, and the slot."""
        endpoint = _endpoint(job)
        wait = outcomes.retry_after(attempt) if attempt is not None else None
        if wait:  # the receiver is waited for: nothing more is sent to it until then
            self.endpoint_slots.pause(endpoint, wait)
        configuration = job.delivery.installation.configuration
        passable = (
            attempt is not None
            and not wait
            and self.endpoint_slots.may_pass(endpoint, limits.limits_of(configuration), slot)
        )
        with self.lock:
            del self.in_flight[id(job)]
            following = self._next_waiting(job) if passable else None
            self.finished.append((job, None if following else slot, attempt))
        self.reported.set()
        return following, slot

    def _next_waiting(self, ended: Job) -> Job | None:
        """(Under ``lock``.) The first job waiting for the ended job's receiver, now in
        flight, if it is one of the same endpoint and the receiver has room in this process.
        One of another endpoint, waiting for that receiver's room (not for its endpoint's
        limits), goes first, at the drain's next dispatch: the receiver's room in this
        process goes in claim order."""
        for index, (_, _, job) in enumerate(self.waiting):
            same = _endpoint(job) == _endpoint(ended)
            if job.receiver != ended.receiver or (not same and job.delivery.pk in self.holds):
                continue
            if not same or not slots.take(job.receiver):
                return None
            del self.waiting[index]
            self._sent(job)
            self.endpoint_slots.passed(_endpoint(job))
            return job
        return None

    def _sent(self, job: Job) -> None:
        """(Under ``lock``.) ``job`` goes in flight: no longer held back."""
        self.holds.pop(job.delivery.pk, None)
        self.in_flight[id(job)] = job

    # --- in the drain's thread ------------------------------------------------------------

    def _dispatch(self) -> None:
        """POST the waiting deliveries, in claim order, whose receiver has a slot in this
        process and whose endpoint has one within its limits across every worker
        (``transport.endpoint_slots``: slots passed on, then one acquisition per endpoint).
        What a limit held back waits (a pause or a long wait: postponed at once); the slots
        not passed on are given back. The store is asked without ``lock``: what is being
        dispatched is out of ``waiting`` meanwhile, so no lane takes it too."""
        ready = defaultdict(list)
        with self.lock:
            kept = []
            for entry in self.waiting:
                if slots.take(entry[2].receiver):
                    ready[_endpoint(entry[2])].append(entry)
                else:
                    kept.append(entry)
            self.waiting = kept
        sent, held = [], []
        for endpoint, entries in ready.items():
            endpoint_limits = limits.limits_of(entries[0][2].delivery.installation.configuration)
            taken, grant = self.endpoint_slots.take(endpoint, endpoint_limits, len(entries))
            sent += [(entry[2], slot) for entry, slot in zip(entries, taken, strict=False)]
            for entry in entries[len(taken) :]:
                slots.give_back_unused(entry[2].receiver)
                held.append((entry, grant, endpoint_limits))
        self.endpoint_slots.give_back_unused()
        with self.lock:
            for job, _ in sent:
                self._sent(job)
            for (order, since, job), grant, endpoint_limits in held:
                self.holds[job.delivery.pk] = (grant, endpoint_limits)
                self.waiting.append((order, since, job))
            self.waiting = sorted(
                ((order, self._held_since(job, since), job) for order, since, job in self.waiting),
                key=lambda entry: entry[0],
            )
        for job, slot in sent:
            senders().submit(self._lane, job, slot)

    def _held_since(self, job: Job, since: float) -> float:
        """(Under ``lock``.) When a waiting job started waiting: long ago (postponed at the
        next step) when its endpoint's limits hold it back for longer than a slot is waited
        for; while this drain keeps getting slots of the endpoint (its share of a fast
        receiver's), since the last one, so a drain at its share works through what it
        claimed."""
        hold = self.holds.get(job.delivery.pk)
        if hold is None:
            return since
        if hold[0].wait > SLOT_WAIT_SECONDS:
            return float("-inf")
        return max(since, self.endpoint_slots.granted_at.get(_endpoint(job), since))

    def _postpone_overdue(self, now: float) -> None:
        """Postpone the deliveries that waited ``SLOT_WAIT_SECONDS`` for a slot: their
        receiver is slow, and they must not take the room of others in the window."""
        with self.lock:
            overdue = [
                (job, self.holds.pop(job.delivery.pk, None))
                for _, since, job in self.waiting
                if now - since >= SLOT_WAIT_SECONDS
            ]
            if not overdue:
                return
            self.waiting = [entry for entry in self.waiting if now - entry[1] < SLOT_WAIT_SECONDS]
        results = []
        for job, hold in overdue:
            if hold is None:  # this process's bound on POSTs to its receiver
                delay = slots.postpone(job.receiver)
                reason = (
                    f"held back: {settings.WEBHOOK_RECEIVER_CONCURRENCY} in flight to "
                    f"{job.receiver} from this worker"
                )
            else:  # its endpoint's limits
                grant, endpoint_limits = hold
                delay = limits.postponement(
                    _endpoint(job), grant, endpoint_limits, slots.typical(job.receiver)
                )
                reason = grant.reason(endpoint_limits)
            result = Result.postponed(retry_in=delay, requeue=False, reason=reason)
            results.append((job.delivery, result))
        self.postponed += outcomes.settle_quietly(results)
        # Due at their next_attempt_at (the settle's clock): poll a little past the last one.
        last = max(result.retry_in for _, result in results) + DRAIN_POLL_SECONDS
        self.postponed_until = max(self.postponed_until, time.monotonic() + last)
