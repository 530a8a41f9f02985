"""A drain's slots of its endpoints' limits (``limits``), taken from and given back to the
store (``limit_stores``), which never stops a drain: a store that does not answer holds
deliveries back (``STORE_DOWN``) rather than break a limit.

**Passing a slot on.** A slot whose attempt ended goes to the drain's next delivery to the
same endpoint at its next dispatch (``webhooks.services.drain``), without asking the store,
while its lease outlives another attempt (taken less than ``PASS_SECONDS`` ago), the endpoint
has no rate limit (each POST spends a token of the bucket) and the drain holds no more than
its share (all of ``max_in_flight`` when its last acquisition found nobody else waiting; its
fair share otherwise: ``limits.fair_count``); otherwise it is given back. A fast receiver's
POSTs then cost the store nothing: asking for a slot again for each one kept the slot idle
for a round trip each time (benchmarks/RESULTS.md, "Issue 23").
"""

import logging
import math
import time
from collections import defaultdict
from dataclasses import dataclass

from ..scheduling import may_pass
from .limit_stores import store
from .limits import (
    LEASE_MARGIN,
    PAUSED,
    STORE_DOWN,
    STORE_DOWN_WAIT,
    Grant,
    Limits,
    new_holder,
)

logger = logging.getLogger(__name__)

#: A slot is passed on while younger than this (seconds): its lease, taken for one attempt
#: and ``LEASE_MARGIN``, still outlives another whole attempt.
PASS_SECONDS = LEASE_MARGIN / 2


def acquire(endpoint: str, limits: Limits, count: int, *, holder: str) -> Grant:
    """Up to ``count`` slots for POSTs to ``endpoint`` now, for ``holder`` (a drain)."""
    try:
        return store().acquire(str(endpoint), limits, count, holder=holder)
    except Exception:  # the store is down: hold back rather than break the limits
        logger.exception("webhook endpoint %s: its limits could not be checked", endpoint)
        return Grant([], STORE_DOWN, STORE_DOWN_WAIT)


def release(endpoint: str, leases: list[str]) -> None:
    """Give back slots; one not given back (the store down) stops counting at its expiry."""
    if not leases:
        return
    try:
        store().release(str(endpoint), leases)
    except Exception:
        logger.exception("webhook endpoint %s: slots not given back", endpoint)


def pause(endpoint: str, seconds: float) -> None:
    """Send ``endpoint`` nothing for ``seconds`` (its receiver answered 429 with Retry-After);
    a longer pause already set stays."""
    if seconds <= 0:
        return
    try:
        store().pause(str(endpoint), seconds)
    except Exception:
        logger.exception("webhook endpoint %s: its Retry-After not recorded", endpoint)


@dataclass(frozen=True)
class Slot:
    lease: str
    taken_at: float  # the drain's clock


class DrainSlots:
    """The slots one drain holds, by endpoint: ``take`` them for deliveries, ``ended`` when
    an attempt ends, ``give_back_unused`` after each turn (the drain's thread); ``pause`` (its
    sender threads too). ``clock``: the drain's monotonic clock."""

    def __init__(self, clock=time.monotonic):
        self.clock = clock
        self.holder = new_holder()
        self.returned: dict[str, list[Slot]] = defaultdict(list)
        self.held: dict[str, int] = defaultdict(int)  # slots taken and not given back
        self.shares: dict[str, int] = {}  # the most it may hold, as its last grant said
        self.granted_at: dict[str, float] = {}  # when it last got a slot of the endpoint
        self.paused_until: dict[str, float] = {}  # as its receiver asked (429 Retry-After)

    def take(self, endpoint, limits: Limits, count: int) -> tuple[list[Slot], Grant]:
        """Up to ``count`` slots of ``endpoint``: those passed on first, then the store's
        (which also tells whether other drains wait: the drain's share); the grant says why
        the rest are held back."""
        now = self.clock()
        returned = self.returned.pop(endpoint, [])
        passed = [slot for slot in returned if self.may_pass(endpoint, limits, slot)][:count]
        self.returned[endpoint] = [slot for slot in returned if slot not in passed]
        grant = Grant([])
        if count > len(passed):
            grant = acquire(endpoint, limits, count - len(passed), holder=self.holder)
            self.held[endpoint] += len(grant.leases)
            self.shares[endpoint] = grant.share(limits)
            if grant.held == PAUSED:  # another drain's receiver asked to wait
                self.paused_until[endpoint] = now + grant.wait
        taken = passed + [Slot(lease, now) for lease in grant.leases]
        if taken:
            self.granted_at[endpoint] = now
        return taken, grant

    def may_pass(self, endpoint, limits: Limits, slot: Slot) -> bool:
        """Whether ``slot``, its attempt ended, may go to the drain's next POST to
        ``endpoint`` without asking the store (see the module's docstring)."""
        return may_pass(
            self.clock(),
            rate_limited=bool(limits.max_per_second),
            held=self.held.get(endpoint, 0),
            share=self.shares.get(endpoint, limits.max_in_flight),
            taken_at=slot.taken_at,
            paused_until=self.paused_until.get(endpoint, -math.inf),
            young_for=PASS_SECONDS,
        )

    def ended(self, endpoint, slot: Slot) -> None:
        self.returned[endpoint].append(slot)

    def pause(self, endpoint, seconds: float) -> None:
        """The receiver asked to wait: nothing is passed on to it meanwhile, and the store,
        asked for slots, says until when."""
        self.paused_until[endpoint] = self.clock() + seconds
        pause(endpoint, seconds)

    def give_back_unused(self) -> None:
        for endpoint, returned in self.returned.items():
            release(endpoint, [slot.lease for slot in returned])
            self.held[endpoint] -= len(returned)
        self.returned.clear()
