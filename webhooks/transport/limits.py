"""The limits of a webhook endpoint (an installation), held across every worker process and
machine: at most ``max_in_flight`` POSTs at once (its configuration's; 10 when unset), at most
``max_per_second`` (unset: no rate limit) as a token bucket of one second's worth (at least
one token), so that over any window of T seconds it gets at most rate x T plus that burst,
and, when it opted in to ``retry_after``, nothing before the time a ``429``'s ``Retry-After``
asked for (``pause``).

A drain asks for slots before it POSTs, for all the jobs of one endpoint at once, and gives
each back when the attempt ended or passes it on to its next POST to the endpoint
(``endpoint_slots``). Each slot is a lease of
``WEBHOOK_RESPONSE_TIMEOUT`` + ``LEASE_MARGIN`` seconds (an attempt never takes longer): a
slot that a killed worker never gave back stops counting then.

**Fair shares.** Each drain asks as a *holder* of its own. While other holders wait for
the endpoint (held back in the last ``WAITER_SECONDS``), a holder gets no more than its
share, ``max_in_flight`` divided among them (``fair_count``): without it, the drain that
gives its slots back and asks again in one step keeps every slot, the others wait, postpone
what they claimed and claim again, and an endpoint limited to 10 in flight is served by one
worker process where 4 would share the machine (benchmarks/RESULTS.md, "Issue 23").

Where the state lives (``WEBHOOK_LIMITS_URL``, ``limit_stores``): in Redis, when it is a Redis
URL (by default the broker's, when the broker is Redis): one Lua script per acquisition,
atomic, on the Redis server's clock (a sorted set of the leases by expiry, a hash for the
bucket, a key with a time to live for the pause), so no worker waits on another and the
database, which every claim and settle already uses, takes no writes for it. Otherwise in the
database (``EndpointThrottle``, whose row is locked for an acquisition, and ``EndpointLease``):
it needs no other server (SQLite and the file-system broker, RabbitMQ), and a row lock works on
SQLite and PostgreSQL alike, where an advisory lock would be PostgreSQL's only.
"""

import math
import secrets
import threading
import time
from collections import defaultdict
from dataclasses import dataclass
from datetime import timedelta
from email.utils import parsedate_to_datetime

from django.conf import settings
from django.utils import timezone

#: POSTs in flight to one endpoint when its configuration does not say.
DEFAULT_MAX_IN_FLIGHT = 10
#: A slot's lease lasts an attempt's deadline and this much (seconds).
LEASE_MARGIN = 2.0
#: How long deliveries are held back when the limits' store does not answer (seconds).
STORE_DOWN_WAIT = 1.0
#: A holder held back counts as waiting for this long (seconds): longer than a drain takes to
#: ask again (its poll, ``DRAIN_POLL_SECONDS``), short enough that one that left soon stops
#: counting.
WAITER_SECONDS = 0.25
#: Why deliveries are held back.
IN_FLIGHT, RATE, PAUSED, STORE_DOWN = "in_flight", "rate", "paused", "store_down"


@dataclass(frozen=True)
class Limits:
    max_in_flight: int
    max_per_second: float | None

    @property
    def capacity(self) -> float:
        """The token bucket's size: one second's worth, at least one request."""
        return max(self.max_per_second or 0.0, 1.0)


def limits_of(configuration: dict) -> Limits:
    """An endpoint's limits from its configuration (values the configuration's checks refuse
    fall back to the defaults)."""
    in_flight = configuration.get("max_in_flight")
    if isinstance(in_flight, bool) or not isinstance(in_flight, int | float) or in_flight < 1:
        in_flight = DEFAULT_MAX_IN_FLIGHT
    rate = configuration.get("max_per_second")
    if isinstance(rate, bool) or not isinstance(rate, int | float) or not 0 < rate < math.inf:
        rate = None
    return Limits(max_in_flight=int(in_flight), max_per_second=rate)


def limit_problems(configuration: dict) -> list[dict]:
    """The configuration's limits that are not valid values (its types are checked before)."""
    problems = []
    in_flight = configuration.get("max_in_flight")
    if in_flight is not None and (
        isinstance(in_flight, bool)
        or not isinstance(in_flight, int | float)
        or in_flight != int(in_flight)
        or in_flight < 1
    ):
        problems.append(
            {"path": "configuration.max_in_flight", "message": "must be a whole number, 1 or more"}
        )
    rate = configuration.get("max_per_second")
    if rate is not None and (
        isinstance(rate, bool) or not isinstance(rate, int | float) or not 0 < rate < math.inf
    ):
        problems.append(
            {"path": "configuration.max_per_second", "message": "must be a number above 0"}
        )
    return problems


@dataclass(frozen=True)
class Grant:
    """What an acquisition got: a lease per slot granted (the first jobs asked for), and for
    the rest why they are held back and, when known, how long until they may go (seconds)."""

    leases: list[str]
    held: str = ""
    wait: float = 0.0
    others: int = 0  # other holders waiting for the endpoint

    def share(self, limits: "Limits") -> int:
        """The most slots the holder may hold while the others wait (``fair_count``)."""
        return _share(limits.max_in_flight, self.others)

    def reason(self, limits: Limits) -> str:
        """The held back jobs' reason as their delivery's log says it."""
        if self.held == IN_FLIGHT:
            return f"held back: endpoint limit {limits.max_in_flight} in flight"
        if self.held == RATE:
            return f"held back: endpoint limit {limits.max_per_second:g} per second"
        if self.held == PAUSED:
            until = timezone.now() + timedelta(seconds=self.wait)
            return (
                "held back: the receiver asked to wait (429 Retry-After) until "
                f"{until:%H:%M:%S} UTC"
            )
        if self.held == STORE_DOWN:
            return "held back: the endpoint limits could not be checked"
        return ""


def lease_seconds() -> float:
    return settings.WEBHOOK_RESPONSE_TIMEOUT + LEASE_MARGIN


def new_holder() -> str:
    """A name for one drain's slots, unique across workers and machines."""
    return secrets.token_hex(6)


def fair_count(asked: int, *, free: int, mine: int, others: int, max_in_flight: int) -> int:
    """How many of the ``asked`` slots a holder that holds ``mine`` gets when ``free`` are
    free and ``others`` other holders wait: all it asks, as far as they are free, when
    nobody else waits; else no more than its share of ``max_in_flight`` (rounded up, so
    every slot is somebody's). The Redis script says the same in Lua."""
    count = max(min(asked, free), 0)
    if others > 0:
        count = min(count, max(_share(max_in_flight, others) - mine, 0))
    return count


def _share(max_in_flight: int, others: int) -> int:
    """A holder's share of ``max_in_flight`` while ``others`` wait, rounded up."""
    return -(-max_in_flight // (others + 1))


class _Postponements:
    """When the deliveries this process postponed for each endpoint come due, so that those
    held back together come back spread out, as the limits let them go, rather than all at
    once."""

    def __init__(self):
        self._lock = threading.Lock()
        self._due: dict[str, list[float]] = defaultdict(list)

    def delay(self, endpoint: str, first: float, spacing: float) -> float:
        now = time.monotonic()
        with self._lock:
            waiting = [due for due in self._due[endpoint] if due > now]
            delay = first + spacing * len(waiting)
            waiting.append(now + delay)
            self._due[endpoint] = waiting
            return delay


_postponements = _Postponements()


def postponement(endpoint: str, grant: Grant, limits: Limits, typical: float) -> float:
    """Seconds until a delivery ``grant`` held back should come back: when its wait ends (a
    pause, the next token) or, its endpoint full, a typical attempt (``typical`` seconds)
    later; each held back after it a slot's or a token's worth later."""
    spacing = typical / limits.max_in_flight
    if limits.max_per_second:
        spacing = max(spacing, 1 / limits.max_per_second)
    first = grant.wait if grant.held != IN_FLIGHT else max(grant.wait, typical)
    return _postponements.delay(str(endpoint), first, spacing)


# --- Retry-After ------------------------------------------------------------------------------


def retry_after(headers: dict) -> float | None:
    """Seconds a response's ``Retry-After`` asks to wait (a number of seconds or an HTTP
    date), at most ``WEBHOOK_RETRY_AFTER_MAX``; None without one that parses."""
    value = next((v for k, v in (headers or {}).items() if k.lower() == "retry-after"), None)
    if value is None:
        return None
    value = str(value).strip()
    try:
        seconds = float(value)
    except ValueError:
        try:
            when = parsedate_to_datetime(value)
        except (TypeError, ValueError, IndexError):
            return None
        if when.tzinfo is None:
            return None
        seconds = (when - timezone.now()).total_seconds()
    if not math.isfinite(seconds):
        return None
    return min(max(seconds, 0.0), settings.WEBHOOK_RETRY_AFTER_MAX)
