"""A drain's window of deliveries (``delivery.webhook_deliver_due`` runs it): the attempts in
flight in the sender threads, those waiting for a slot of their receiver (a while; then
postponed, and the drain comes back to them when they are due), and the attempts that ended,
to settle. What to send, hold back or postpone, and when, is decided by its schedule
(``webhooks.scheduling``, pure and clock-injected); the drain moves data in and out of it:
claims, grants of the endpoints' limits, attempts, settling and postponing. A sender thread
POSTs one delivery and reports the attempt as it ends; the drain's thread settles it with the
others and gives its endpoint's slot to the next delivery waiting (``endpoint_slots``).
"""

import json
import logging
import math
import threading
import time

from django.conf import settings
from django.db.models import Q
from django.utils import timezone

from docplatform import events
from docplatform.events.leases import Result
from docplatform.events.models import Delivery

from ..scheduling import Entry, Hold, Schedule, Timing, assign
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
#: How long a claimed delivery waits in the drain for a slot of its receiver before it is
#: postponed (its receiver is slow: it must not take the room of others).
SLOT_WAIT_SECONDS = 0.1


def longest_hold() -> float:
    """The longest a drain holds a delivery it claimed: a wait for its receiver's slot, then
    the attempt to its deadline (connecting included)."""
    return SLOT_WAIT_SECONDS + settings.WEBHOOK_RESPONSE_TIMEOUT


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
    decisions are its ``schedule``'s (``webhooks.scheduling``), which this thread and the
    sender threads hand data to and take it from under ``lock``. ``clock`` is the monotonic
    clock it and its endpoint slots read."""

    def __init__(self, clock=time.monotonic):
        self.clock = clock
        self.targets: dict = {}  # one resolution per URL and drain
        self.endpoint_slots = DrainSlots(clock=clock)  # of its endpoints' limits
        self.lock = threading.Lock()
        self.reported = threading.Event()  # set when an attempt ended
        timing = Timing(poll=DRAIN_POLL_SECONDS, slot_wait=SLOT_WAIT_SECONDS)
        self.schedule = Schedule(timing)  # shared with the sender threads, under ``lock``
        self.postponed: list[Delivery] = []
        self.reclaimed = 0  # claims of deliveries it had postponed

    @property
    def holding(self) -> int:
        """The deliveries it holds that take room in its window: in flight or waiting."""
        return self.schedule.holding

    @property
    def holds(self) -> dict:
        """The deliveries its endpoints' limits hold back, by id."""
        return self.schedule.holds

    @property
    def attempting(self) -> list[int]:
        """The deliveries it holds and has not settled (should a lease run out meanwhile, the
        drain does not claim them again)."""
        with self.lock:
            keys = self.schedule.attempting()
        return keys + [delivery.pk for delivery, _ in self.schedule.ended]

    @property
    def busy(self) -> bool:
        return self.schedule.busy(self.clock())

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
        now = self.clock()
        arrived = []
        for job in _jobs(deliveries, self.targets):
            if job.receiver is None:
                self.schedule.ended_now((job.delivery, job.run()))
            else:
                arrived.append((job, job.delivery.pk, _endpoint(job), job.receiver))
        with self.lock:
            self.schedule.arrive(now, arrived)
        self._dispatch()

    def step(self, *, wait: float) -> None:
        """Take the attempts that ended (waiting up to ``wait`` seconds for one), give their
        slots to waiting deliveries, postpone those that waited too long, and settle what
        ended (those that ended together, together)."""
        if wait > 0:
            if self.schedule.in_flight:
                self.reported.wait(wait)
            else:
                time.sleep(wait)
        self.reported.clear()
        with self.lock:
            finished = self.schedule.take_finished()
        now = self.clock()
        for entry, slot, attempt in finished:
            if slot is not None:
                self.endpoint_slots.ended(entry.endpoint, slot)
            if attempt is not None:
                self.schedule.ended_now((entry.job.delivery, attempt))
        self._dispatch()
        self._postpone_overdue(now)
        outcomes.settle(self.schedule.take_ended())

    def idle_wait(self) -> float:
        """How long the drain may wait for an attempt to end before it has to act (claim,
        settle, or postpone). Nothing when it holds nothing and waits for nothing it
        postponed: it lets go of its drain request at once rather than keep it a while for
        what may commit, as an event committed while a drain dozed waited for it (the latency
        of a steady trickle of events: tens of ms)."""
        with self.lock:
            return self.schedule.idle_wait(self.clock(), postponed=bool(self.postponed))

    def finish(self) -> None:
        """Before handing over: settle every attempt in flight (what has not ended by the
        time an attempt must have is left to its lease), and make what waits or was
        postponed due now, so that the next drain takes it at once."""
        until = self.clock() + longest_hold()  # every attempt ends by then
        while (self.schedule.in_flight or self.schedule.finished) and self.clock() < until:
            self.step(wait=DRAIN_POLL_SECONDS)
        self._postpone_overdue(math.inf)
        outcomes.settle(self.schedule.take_ended())
        if self.postponed:
            now = timezone.now()
            self._still_postponed().filter(next_attempt_at__gt=now).update(next_attempt_at=now)

    # --- in the sender threads ------------------------------------------------------------

    def _send(self, entry: Entry, slot: Slot) -> None:
        """POST ``entry``'s job within ``slot`` and report the attempt to the drain's thread
        (a 429's Retry-After pauses its endpoint first)."""
        attempt = None
        try:
            attempt = entry.job.run()
            wait = outcomes.retry_after(attempt)
            if wait:  # the receiver is waited for: nothing more is sent to it until then
                self.endpoint_slots.pause(entry.endpoint, wait)
        except Exception:  # a fault of ours: without an attempt, left to its lease
            logger.exception("webhook delivery %s: the attempt failed", entry.key)
        finally:  # never left counted in flight
            with self.lock:
                self.schedule.attempt_ended(entry, slot, attempt)
            self.reported.set()

    # --- in the drain's thread ------------------------------------------------------------

    def _dispatch(self) -> None:
        """POST the waiting deliveries, in claim order, whose receiver has a slot in this
        process and whose endpoint has one within its limits across every worker
        (``transport.endpoint_slots``: slots passed on, then one acquisition per endpoint).
        What a limit held back waits (a pause or a long wait: postponed at once); the slots
        not passed on are given back. The store is asked without ``lock``: what is being
        dispatched is out of the schedule's waiting jobs meanwhile."""
        with self.lock:
            ready = self.schedule.take_ready(slots.take)
        sent, held = [], []
        for endpoint, entries in ready.items():
            endpoint_limits = limits.limits_of(entries[0].job.delivery.installation.configuration)
            taken, grant = self.endpoint_slots.take(endpoint, endpoint_limits, len(entries))
            going, back = assign(entries, taken)
            sent += going
            for entry in back:
                slots.give_back_unused(entry.receiver)
                held.append((entry, Hold(grant.wait, (grant, endpoint_limits))))
        self.endpoint_slots.give_back_unused()
        with self.lock:
            self.schedule.dispatched(
                [entry for entry, _ in sent], held, self.endpoint_slots.granted_at
            )
        for entry, slot in sent:
            senders().submit(self._send, entry, slot)

    def _postpone_overdue(self, now: float) -> None:
        """Postpone the deliveries that waited ``SLOT_WAIT_SECONDS`` for a slot: their
        receiver is slow, and they must not take the room of others in the window."""
        with self.lock:
            overdue = self.schedule.overdue(now)
        if not overdue:
            return
        results = []
        for entry, hold in overdue:
            if hold is None:  # this process's bound on POSTs to its receiver
                delay = slots.postpone(entry.receiver)
                reason = (
                    f"held back: {settings.WEBHOOK_RECEIVER_CONCURRENCY} in flight to "
                    f"{entry.receiver} from this worker"
                )
            else:  # its endpoint's limits
                grant, endpoint_limits = hold.detail
                delay = limits.postponement(
                    entry.endpoint, grant, endpoint_limits, slots.typical(entry.receiver)
                )
                reason = grant.reason(endpoint_limits)
            result = Result.postponed(retry_in=delay, requeue=False, reason=reason)
            results.append((entry.job.delivery, result))
        self.postponed += outcomes.settle_quietly(results)
        # Due at their next_attempt_at (the settle's clock): poll a little past the last one.
        self.schedule.postponed(self.clock(), max(result.retry_in for _, result in results))
