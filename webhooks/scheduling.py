"""The webhook drain's scheduling core: given the claimed jobs, the slot grants and the
ended attempts, what to send, hold back or postpone, and when the drain must act next.

Pure: no threads, no database, no sockets, no clock of its own (every time is an argument,
seconds on one monotonic clock). The drain (``webhooks.services.drain``) moves data in and
out: its thread hands it claimed jobs, the grants of the endpoints' limits and the attempts
that ended; its sender threads hand it the attempt each POSTed, under the drain's lock (a
``Schedule`` is not thread-safe). A receiver's room in the worker process is asked through a
callable (``room``), so that what takes it is the caller's.

A job waits in claim order for its receiver's room and its endpoint's slot; one that waited
``slot_wait`` seconds is postponed (its receiver is slow or its endpoint full: it must not
take the room of others). One that an endpoint's limits hold back for longer than that is
postponed at once; while the drain keeps getting slots of the endpoint, it waits from the
last one (a drain at its share works through what it claimed).
"""

import itertools
import math
from collections.abc import Callable, Hashable, Mapping
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Timing:
    """The drain's waits (seconds)."""

    poll: float  # how long it waits for an attempt to end before it claims again
    slot_wait: float  # how long a job waits for a slot before it is postponed


@dataclass(eq=False)
class Entry:
    """A claimed job in the window: its claim order, since when it waits, its delivery
    (``key``), endpoint and receiver (``host:port``); ``job`` is the caller's."""

    order: int
    since: float
    key: Hashable
    endpoint: Hashable
    receiver: str
    job: Any = None


@dataclass(frozen=True)
class Hold:
    """Why an endpoint's limits held a job back: how long until they may let it go
    (``wait``) and the caller's details (the grant and the limits)."""

    wait: float
    detail: Any = None


def may_pass(
    now: float,
    *,
    rate_limited: bool,
    held: int,
    share: int,
    taken_at: float,
    paused_until: float,
    young_for: float,
) -> bool:
    """Whether a slot whose attempt ended goes straight to the next POST to its endpoint:
    the endpoint has no rate limit (each POST spends a token), the drain holds no more than
    its share, the slot's lease outlives another attempt (taken less than ``young_for`` ago),
    and the receiver has not asked to wait."""
    return not rate_limited and held <= share and now - taken_at < young_for and now >= paused_until


def assign(entries: list[Entry], slots: list) -> tuple[list[tuple[Entry, Any]], list[Entry]]:
    """An endpoint's ready jobs (claim order) and the slots granted: the first jobs go with
    a slot each, the rest are held back."""
    return list(zip(entries, slots, strict=False)), entries[len(slots) :]


class Schedule:
    """One drain's window: what waits (claim order), what is in flight, what the limits hold
    back, the attempts ended and not yet settled."""

    def __init__(self, timing: Timing):
        self.timing = timing
        self.order = itertools.count()
        self.waiting: list[Entry] = []
        self.in_flight: dict[int, Entry] = {}  # by id(entry)
        self.holds: dict[Hashable, Hold] = {}  # held back by their endpoint's limits, by key
        self.finished: list[tuple[Entry, Any, Any]] = []  # (entry, slot to end, attempt)
        self.ended: list = []  # the caller's ended attempts, to settle
        self.postponed_until = -math.inf  # when the last job postponed comes due

    # --- what the drain holds -----------------------------------------------------------

    @property
    def holding(self) -> int:
        """The jobs that take room in the window: in flight or waiting."""
        return len(self.in_flight) + len(self.waiting)

    def attempting(self) -> list[Hashable]:
        """The keys of every job held and not settled."""
        entries = [*self.in_flight.values(), *self.waiting, *(e for e, _, _ in self.finished)]
        return [entry.key for entry in entries]

    def busy(self, now: float) -> bool:
        """Whether the drain has something to do or wait for (a postponed job's time)."""
        return self.holding > 0 or bool(self.ended or self.finished) or now < self.postponed_until

    def idle_wait(self, now: float, *, postponed: bool) -> float:
        """How long the drain may wait for an attempt to end before it has to act (claim,
        settle, postpone, ask again for what was held back); nothing when idle, unless a job
        it ``postponed`` still waits for its time."""
        if not self.busy(now) and not postponed:
            return 0.0
        wakes = [now + self.timing.poll]
        if self.waiting:
            wakes.append(min(entry.since for entry in self.waiting) + self.timing.slot_wait)
        return max(0.0, min(wakes) - now)

    # --- claimed jobs in, jobs to send out ----------------------------------------------

    def arrive(self, now: float, jobs: list[tuple[Any, Hashable, Hashable, str]]) -> None:
        """Claimed jobs, as ``(job, key, endpoint, receiver)``, wait from ``now``."""
        for job, key, endpoint, receiver in jobs:
            self.waiting.append(Entry(next(self.order), now, key, endpoint, receiver, job))

    def take_ready(self, room: Callable[[str], bool]) -> dict[Hashable, list[Entry]]:
        """The waiting jobs whose receiver has ``room`` (asked in claim order), by endpoint,
        out of ``waiting`` until ``dispatched``."""
        ready: dict[Hashable, list[Entry]] = {}
        kept = []
        for entry in self.waiting:
            if room(entry.receiver):
                ready.setdefault(entry.endpoint, []).append(entry)
            else:
                kept.append(entry)
        self.waiting = kept
        return ready

    def dispatched(
        self,
        sent: list[Entry],
        held: list[tuple[Entry, Hold]],
        granted_at: Mapping[Hashable, float],
    ) -> None:
        """``sent`` went in flight; ``held`` wait again, held back by their endpoint's
        limits. Each waiting job's wait is reckoned again (``held_since``)."""
        for entry in sent:
            self._sent(entry)
        for entry, hold in held:
            self.holds[entry.key] = hold
            self.waiting.append(entry)
        for entry in self.waiting:
            entry.since = self.held_since(entry, granted_at)
        self.waiting.sort(key=lambda entry: entry.order)

    def held_since(self, entry: Entry, granted_at: Mapping[Hashable, float]) -> float:
        """When a waiting job started waiting: long ago (postponed next) when its endpoint's
        limits hold it back for longer than a slot is waited for; while the drain keeps
        getting slots of the endpoint (``granted_at``), since the last one."""
        hold = self.holds.get(entry.key)
        if hold is None:
            return entry.since
        if hold.wait > self.timing.slot_wait:
            return -math.inf
        return max(entry.since, granted_at.get(entry.endpoint, entry.since))

    # --- ended attempts in ----------------------------------------------------------------

    def attempt_ended(self, entry: Entry, slot: Any, attempt: Any) -> None:
        """``entry``'s attempt ended (``attempt`` None: a fault of ours); its slot goes back
        with it to the drain's thread."""
        self.in_flight.pop(id(entry), None)
        self.finished.append((entry, slot, attempt))

    def take_finished(self) -> list[tuple[Entry, Any, Any]]:
        finished, self.finished = self.finished, []
        return finished

    def ended_now(self, result: Any) -> None:
        """An attempt ended (``result`` is the caller's), to settle at the drain's turn."""
        self.ended.append(result)

    def take_ended(self) -> list:
        ended, self.ended = self.ended, []
        return ended

    # --- postponing -----------------------------------------------------------------------

    def overdue(self, now: float) -> list[tuple[Entry, Hold | None]]:
        """The jobs that waited ``slot_wait`` by ``now``, out of the window, each with what
        held it back (None: its receiver's room in this process). Reckoned as ``idle_wait``
        reckons its wake (``since + slot_wait``), so that the wake finds them due."""
        late = [e for e in self.waiting if e.since + self.timing.slot_wait <= now]
        if not late:
            return []
        self.waiting = [e for e in self.waiting if e.since + self.timing.slot_wait > now]
        return [(entry, self.holds.pop(entry.key, None)) for entry in late]

    def postponed(self, now: float, last: float) -> None:
        """Jobs were postponed, the last due in ``last`` seconds: the drain stays a poll past
        it."""
        self.postponed_until = max(self.postponed_until, now + last + self.timing.poll)

    def _sent(self, entry: Entry) -> None:
        self.holds.pop(entry.key, None)
        self.in_flight[id(entry)] = entry
