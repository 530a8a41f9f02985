"""A drain's slots of its endpoints' limits (``limits``), taken from and given back to the
store (``limit_stores``), which never stops a drain: a store that does not answer holds
deliveries back (``STORE_DOWN``) rather than break a limit.

**Passing a slot on.** A slot whose attempt ended goes straight to the drain's next delivery
to the same endpoint, without asking the store, while its lease outlives another attempt
(taken less than ``PASS_SECONDS`` ago), the endpoint has no rate limit (each POST spends a
token of the bucket) and its last acquisition found no other drain waiting (the fair
shares); otherwise it is given back. A fast receiver's POSTs then cost the store nothing:
asking for a slot again for each one kept the slot idle for a round trip and a turn of the
drain each time (benchmarks/RESULTS.md, "Issue 23").
"""

import logging
import time
from collections import defaultdict
from dataclasses import dataclass

from .limit_stores import store
from .limits import LEASE_MARGIN, STORE_DOWN, STORE_DOWN_WAIT, Grant, Limits, new_holder

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
    taken_at: float  # time.monotonic()


class DrainSlots:
    """The slots one drain holds, by endpoint: ``take`` them for deliveries, ``ended`` when
    an attempt ends, ``give_back_unused`` after each turn."""

    def __init__(self):
        self.holder = new_holder()
        self.returned: dict[str, list[Slot]] = defaultdict(list)
        self.contended: dict[str, bool] = {}
        self.granted_at: dict[str, float] = {}  # when it last got a slot of the endpoint

    def take(self, endpoint, limits: Limits, count: int) -> tuple[list[Slot], Grant]:
        """Up to ``count`` slots of ``endpoint``: those passed on first, then the store's;
        the grant says why the rest are held back."""
        now = time.monotonic()
        passed = []
        if not limits.max_per_second and not self.contended.get(endpoint):
            returned = self.returned.pop(endpoint, [])
            passed = [slot for slot in returned if now - slot.taken_at < PASS_SECONDS][:count]
            self.returned[endpoint] = [slot for slot in returned if slot not in passed]
        grant = Grant([])
        if count > len(passed):
            grant = acquire(endpoint, limits, count - len(passed), holder=self.holder)
            self.contended[endpoint] = grant.contended
        taken = passed + [Slot(lease, now) for lease in grant.leases]
        if taken:
            self.granted_at[endpoint] = now
        return taken, grant

    def ended(self, endpoint, slot: Slot) -> None:
        self.returned[endpoint].append(slot)

    def pause(self, endpoint, seconds: float) -> None:
        """The receiver asked to wait: nothing is passed on to it; the store says until when."""
        self.contended[endpoint] = True
        pause(endpoint, seconds)

    def give_back_unused(self) -> None:
        for endpoint, returned in self.returned.items():
            release(endpoint, [slot.lease for slot in returned])
        self.returned.clear()
