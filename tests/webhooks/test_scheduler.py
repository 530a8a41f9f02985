"""The webhook drain's scheduling core (``webhooks.scheduling``) on fake time: a drain and its
sender threads played event by event (``Play``), receivers that answer after a set time (one
takes 60 s), endpoints whose limits a small store grants with the fair shares of
``webhooks.transport.limits``. Nothing sleeps; nothing is sent."""

import math
from collections import Counter
from dataclasses import dataclass, field

from webhooks.scheduling import Entry, Hold, Schedule, Timing, assign, may_pass
from webhooks.transport.limits import WAITER_SECONDS, Grant, fair_count

TIMING = Timing(poll=0.05, slot_wait=0.1)
FAST, SLOW = "fast.example:443", "slow.example:443"


@dataclass
class Store:
    """The endpoints' limits across drains: ``max_in_flight`` each, shared fairly among the
    drains that wait (``fair_count``), and a pause until a time (a 429's Retry-After)."""

    max_in_flight: dict = field(default_factory=dict)
    paused_until: dict = field(default_factory=dict)
    held: Counter = field(default_factory=Counter)  # by (holder, endpoint)
    waited_at: dict = field(default_factory=dict)  # by (holder, endpoint)
    most_in_flight: Counter = field(default_factory=Counter)  # by endpoint

    def acquire(self, holder, endpoint, count: int, now: float) -> tuple[int, Grant, float]:
        limit = self.max_in_flight.get(endpoint, 10)
        if now < self.paused_until.get(endpoint, -math.inf):
            return 0, Grant([], "paused", self.paused_until[endpoint] - now), limit
        others = sum(
            1
            for (other, where), at in self.waited_at.items()
            if where == endpoint and other != holder and now - at < WAITER_SECONDS
        )
        total = sum(n for (_, where), n in self.held.items() if where == endpoint)
        mine = self.held[holder, endpoint]
        got = fair_count(count, free=limit - total, mine=mine, others=others, max_in_flight=limit)
        if got < count:
            self.waited_at[holder, endpoint] = now
        self.held[holder, endpoint] += got
        self.most_in_flight[endpoint] = max(self.most_in_flight[endpoint], total + got)
        grant = Grant(["lease"] * got, "in_flight" if got < count else "", 0.0, others)
        return got, grant, limit

    def release(self, holder, endpoint) -> None:
        self.held[holder, endpoint] -= 1


@dataclass
class Slot:
    taken_at: float


class Play:
    """One drain on fake time: its thread's turns (claim, dispatch, postpone, settle) and its
    sender threads' (an attempt ends), each moving data in and out of a
    ``Schedule`` as ``webhooks.services.drain.Drain`` does. A postponed job is claimed again
    when due (a typical attempt later, or when its hold ends)."""

    def __init__(self, store: Store, durations: dict, *, name="drain", receiver_bound=10):
        self.name, self.store, self.durations = name, store, durations
        self.receiver_bound = receiver_bound
        self.schedule = Schedule(TIMING)
        self.now = 0.0
        self.room_used: Counter = Counter()  # POSTs in flight by receiver, this process
        self.granted_at: dict = {}
        self.running: list = []  # (ends at, entry, slot)
        self.sent: list = []  # (at, key, endpoint)
        self.postponed: list = []  # (at, key, hold)
        self.settled: list = []  # (at, key)
        self.comeback: list = []  # (due, key, endpoint, receiver)

    def room(self, receiver: str) -> bool:
        if self.room_used[receiver] >= self.receiver_bound:
            return False
        self.room_used[receiver] += 1
        return True

    def claim(self, jobs: list[tuple[int, str, str]]) -> None:
        """Claimed ``(key, endpoint, receiver)`` jobs, then the drain's dispatch."""
        self.schedule.arrive(self.now, [(None, *job) for job in jobs])
        self.dispatch()

    def dispatch(self) -> None:
        sent, held = [], []
        for endpoint, entries in self.schedule.take_ready(self.room).items():
            got, grant, _ = self.store.acquire(self.name, endpoint, len(entries), self.now)
            if got:
                self.granted_at[endpoint] = self.now
            going, back = assign(entries, [Slot(self.now) for _ in range(got)])
            sent += going
            for entry in back:
                self.room_used[entry.receiver] -= 1
                held.append((entry, Hold(grant.wait, grant)))
        self.schedule.dispatched([entry for entry, _ in sent], held, self.granted_at)
        for entry, slot in sent:
            self.post(entry, slot)

    def post(self, entry: Entry, slot: Slot) -> None:
        self.sent.append((self.now, entry.key, entry.endpoint))
        self.running.append((self.now + self.durations[entry.receiver], entry, slot))

    def attempt_ends(self, entry: Entry, slot: Slot) -> None:
        """A sender thread: its POST ended; the attempt and the slot go to the drain's
        thread."""
        self.room_used[entry.receiver] -= 1
        self.schedule.attempt_ended(entry, slot, "ok")

    def step(self) -> None:
        """The drain's thread: what ended, a dispatch, what waited too long, a settle."""
        due = [job for job in self.comeback if job[0] <= self.now]
        self.comeback = [job for job in self.comeback if job[0] > self.now]
        if due:
            self.schedule.arrive(self.now, [(None, *job[1:]) for job in due])
        for entry, slot, _ in self.schedule.take_finished():
            if slot is not None:
                self.store.release(self.name, entry.endpoint)
            self.schedule.ended_now(entry.key)
        self.dispatch()
        for entry, hold in self.schedule.overdue(self.now):
            self.postponed.append((self.now, entry.key, hold))
            delay = max(hold.wait if hold else 0.0, self.durations[entry.receiver])
            self.comeback.append((self.now + delay, entry.key, entry.endpoint, entry.receiver))
            self.schedule.postponed(self.now, delay)
        self.settled += [(self.now, key) for key in self.schedule.take_ended()]

    def next_event(self) -> float:
        wake = self.now + self.schedule.idle_wait(self.now, postponed=bool(self.comeback))
        ends = [ends_at for ends_at, _, _ in self.running]
        return min([wake, *ends, *(job[0] for job in self.comeback)])


def play(plays: list[Play], until: float) -> None:
    """Run the drains on one fake clock until ``until`` (or all idle)."""
    now = 0.0
    for _ in range(100_000):
        busy = [p for p in plays if p.schedule.busy(now) or p.running or p.comeback]
        if not busy:
            return
        now = max(now, min(p.next_event() for p in busy))
        if now > until:
            return
        for p in plays:
            p.now = now
            ending = [run for run in p.running if run[0] <= now]
            p.running = [run for run in p.running if run[0] > now]
            for _, entry, slot in ending:
                p.attempt_ends(entry, slot)
        for p in plays:
            p.step()
    raise AssertionError("the drains never settled down")


def test_the_receivers_room_goes_in_claim_order():
    """Three jobs for a receiver with room for two: the first two claimed go, the third
    waits, and when one ends it is the next sent."""
    play_ = Play(Store(), {FAST: 1.0}, receiver_bound=2)
    play_.claim([(1, "a", FAST), (2, "b", FAST), (3, "a", FAST)])
    assert [key for _, key, _ in play_.sent] == [1, 2]
    assert [entry.key for entry in play_.schedule.waiting] == [3]
    play([play_], until=10)
    assert [key for _, key, _ in play_.sent] == [1, 2, 3]
    assert [key for _, key in play_.settled] == [1, 2, 3]


def test_an_endpoints_limit_is_never_exceeded_and_its_slots_go_to_the_next_jobs():
    """An endpoint limited to 3 in flight, 12 jobs claimed at once: never more than 3 POSTs
    at a time, and each slot, its POST ended, goes to the next job at the drain's next turn
    (4 rounds, one per attempt's time, no job postponed while the slots keep coming)."""
    store = Store(max_in_flight={"a": 3})
    play_ = Play(store, {FAST: 0.05})
    play_.claim([(key, "a", FAST) for key in range(12)])
    play([play_], until=10)
    assert store.most_in_flight["a"] == 3
    assert sorted(key for _, key, _ in play_.sent) == list(range(12))
    assert sorted({round(at, 3) for at, _, _ in play_.sent}) == [0.0, 0.05, 0.1, 0.15]
    assert play_.postponed == []


def test_a_slow_receiver_holds_up_nobody_else():
    """A receiver that answers after 60 s, with room for 2 in this process, and a fast one:
    the slow one's two POSTs run their 60 s; its other jobs are postponed after a slot's wait
    (0.1 s), and every fast job is sent and settled within half a second."""
    play_ = Play(Store(), {SLOW: 60.0, FAST: 0.01}, receiver_bound=2)
    jobs = [(key, "slow", SLOW) if key % 2 else (key, "fast", FAST) for key in range(20)]
    play_.claim(jobs)
    play([play_], until=1.0)
    fast = {key for key, endpoint, _ in jobs if endpoint == "fast"}
    settled = {key: at for at, key in play_.settled}
    assert fast <= set(settled)
    assert max(settled[key] for key in fast) < 0.5
    assert [key for _, key, _ in play_.sent if key % 2] == [1, 3]
    assert {key for _, key, _ in play_.postponed} == {5, 7, 9, 11, 13, 15, 17, 19}
    assert {round(at, 3) for at, _, _ in play_.postponed} == {0.1}


def test_a_job_waiting_for_room_is_postponed_at_the_slot_wait_not_before():
    schedule = Schedule(TIMING)
    schedule.arrive(10.0, [(None, 1, "a", SLOW)])
    assert schedule.take_ready(lambda receiver: False) == {}
    assert schedule.overdue(10.099) == []
    assert math.isclose(schedule.idle_wait(10.0, postponed=False), TIMING.poll)  # poll first
    assert math.isclose(schedule.idle_wait(10.07, postponed=False), 0.03)
    [(entry, hold)] = schedule.overdue(10.1)
    assert (entry.key, hold) == (1, None)
    assert schedule.holding == 0


def test_a_long_hold_is_postponed_at_once_and_a_short_one_waits_from_the_last_grant():
    """A 429's pause (longer than a slot's wait) is postponed at the next turn; a job held
    back by a full endpoint whose slots keep coming waits from the latest grant."""
    schedule = Schedule(TIMING)
    schedule.arrive(0.0, [(None, 1, "paused", FAST), (None, 2, "full", FAST)])
    ready = schedule.take_ready(lambda receiver: True)
    held = [(ready["paused"][0], Hold(30.0)), (ready["full"][0], Hold(0.0))]
    schedule.dispatched([], held, granted_at={"full": 0.08})
    assert schedule.idle_wait(0.0, postponed=False) == 0.0  # the long hold: at once
    assert [(entry.key, hold.wait) for entry, hold in schedule.overdue(0.0)] == [(1, 30.0)]
    assert schedule.idle_wait(0.0, postponed=False) == TIMING.poll  # asks again at its poll
    assert schedule.overdue(0.17) == []  # 0.1 s from the grant at 0.08, not from 0.0
    assert [entry.key for entry, _ in schedule.overdue(0.18)] == [2]


def test_a_429_pause_stops_slots_being_passed_on_until_it_ends():
    """A 429 with Retry-After: 2 while the first POST is in flight pauses the endpoint in
    the store: the next job is held back, postponed at once (the pause outlasts a slot's
    wait), comes back when the pause ends and is sent then; the first's slot is not passed
    on meanwhile."""
    store = Store()
    play_ = Play(store, {FAST: 0.5})
    play_.claim([(1, "a", FAST)])
    store.paused_until["a"] = 2.0
    play_.claim([(2, "a", FAST)])
    play([play_], until=10)
    assert [(at, key) for at, key, _ in play_.sent] == [(0.0, 1), (2.0, 2)]
    assert [(at, key) for at, key, _ in play_.postponed] == [(0.0, 2)]
    assert may_pass(**PASSABLE) and not may_pass(**{**PASSABLE, "paused_until": 1.5})


PASSABLE = dict(
    now=1.0, rate_limited=False, held=5, share=5, taken_at=0.5, paused_until=0.0, young_for=1.0
)


def test_a_slot_is_passed_on_only_young_unrated_and_within_the_share():
    assert may_pass(**PASSABLE)
    assert not may_pass(**{**PASSABLE, "rate_limited": True})  # each POST spends a token
    assert not may_pass(**{**PASSABLE, "held": 6})  # over its share
    assert not may_pass(**{**PASSABLE, "taken_at": 0.0})  # its lease may not outlive a POST


def test_a_receivers_room_goes_in_claim_order_across_its_endpoints():
    """A and B share a receiver with room for one; B's job was claimed before A's second.
    When A's first POST ends, B's job goes first, then A's second."""
    play_ = Play(Store(), {FAST: 1.0}, receiver_bound=1)
    play_.claim([(1, "a", FAST), (2, "b", FAST), (3, "a", FAST)])
    play([play_], until=10)
    assert [key for _, key, _ in play_.sent] == [1, 2, 3]


def test_a_job_held_by_its_endpoints_limit_does_not_block_another_endpoint():
    """Endpoint a is full (1 in flight); b's job, claimed after a's second, goes at once."""
    play_ = Play(Store(max_in_flight={"a": 1}), {FAST: 1.0})
    play_.claim([(1, "a", FAST), (2, "a", FAST), (3, "b", FAST)])
    assert [key for _, key, _ in play_.sent] == [1, 3]
    assert list(play_.schedule.holds) == [2]


def test_two_drains_share_an_endpoint_fairly():
    """Two drains, in two processes, each with 40 jobs for one endpoint limited to 4 in
    flight: the first takes all 4; once the second waits, neither passes on more than its
    share (2), and every round after the first (one per 50 ms POST) goes 2 and 2."""
    store = Store(max_in_flight={"a": 4})
    first = Play(store, {FAST: 0.05}, name="first")
    second = Play(store, {FAST: 0.05}, name="second")
    first.claim([(key, "a", FAST) for key in range(40)])
    second.claim([(key, "a", FAST) for key in range(100, 140)])
    play([first, second], until=0.52)
    assert store.most_in_flight["a"] == 4
    rounds = [Counter(round(at, 3) for at, _, _ in drain.sent) for drain in (first, second)]
    assert rounds[0].pop(0.0) == 4 and 0.0 not in rounds[1]
    assert rounds[0] == rounds[1] == {round(0.05 * n, 3): 2 for n in range(1, 11)}


def test_an_ended_attempt_is_held_until_the_drains_turn_settles_it():
    schedule = Schedule(TIMING)
    schedule.arrive(0.0, [(None, key, "a", FAST) for key in range(3)])
    schedule.dispatched(schedule.take_ready(lambda receiver: True)["a"], [], {})
    first, second, _ = list(schedule.in_flight.values())
    for entry in (first, second):
        schedule.attempt_ended(entry, None, "ok")
    assert sorted(schedule.attempting()) == [0, 1, 2]  # ended, not settled: not claimed again
    for entry, _, _ in schedule.take_finished():
        schedule.ended_now(entry.key)
    assert sorted(schedule.attempting()) == [2]  # in flight; the ended are the caller's
    assert schedule.take_ended() == [0, 1]
    assert schedule.busy(2.0)  # one still in flight
