"""The limits of a webhook endpoint (an installation), held across every worker process and
machine: at most ``max_in_flight`` POSTs at once (its configuration's; 10 when unset), at most
``max_per_second`` (unset: no rate limit) as a token bucket of one second's worth (at least
one token), so that over any window of T seconds it gets at most rate x T plus that burst,
and nothing before the time a ``429``'s ``Retry-After`` asked for (``pause``).

A drain asks for slots before it POSTs (``acquire``, for all the jobs of one endpoint at once)
and gives each back when the attempt ended (``release``). Each slot is a lease of
``WEBHOOK_RESPONSE_TIMEOUT`` + ``LEASE_MARGIN`` seconds (an attempt never takes longer): a
slot that a killed worker never gave back stops counting then.

Where the state lives (``WEBHOOK_LIMITS_URL``): in Redis, when it is a Redis URL (by default
the broker's, when the broker is Redis): one Lua script per acquisition, atomic, on the
Redis server's clock (a sorted set of the leases by expiry, a hash for the bucket, a key with
a time to live for the pause), so no worker waits on another and the database, which every
claim and settle already uses, takes no writes for it. Otherwise in the database
(``EndpointThrottle``, whose row is locked for an acquisition, and ``EndpointLease``): it
needs no other server (SQLite and the file-system broker, RabbitMQ), and a row lock works on
SQLite and PostgreSQL alike, where an advisory lock would be PostgreSQL's only.
"""

import functools
import logging
import math
import secrets
import threading
import time
from collections import defaultdict
from dataclasses import dataclass
from datetime import timedelta
from email.utils import parsedate_to_datetime

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from ..models import EndpointLease, EndpointThrottle

logger = logging.getLogger(__name__)

#: POSTs in flight to one endpoint when its configuration does not say.
DEFAULT_MAX_IN_FLIGHT = 10
#: A slot's lease lasts an attempt's deadline and this much (seconds).
LEASE_MARGIN = 2.0
#: How long deliveries are held back when the limits' store does not answer (seconds).
STORE_DOWN_WAIT = 1.0
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


def acquire(endpoint: str, limits: Limits, count: int) -> Grant:
    """Up to ``count`` slots for POSTs to ``endpoint`` now."""
    try:
        return store().acquire(str(endpoint), limits, count)
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


@functools.cache
def _store_for(url: str):
    return DatabaseStore() if url == "database" else RedisStore(url)


def store():
    """The store ``WEBHOOK_LIMITS_URL`` names (one per process and URL)."""
    return _store_for(settings.WEBHOOK_LIMITS_URL)


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


# --- Redis ------------------------------------------------------------------------------------

#: KEYS: the leases (a sorted set by expiry, ms), the bucket (a hash), the pause (a key with a
#: time to live). ARGV: slots asked, max in flight, the rate (0: none), the bucket's capacity,
#: the lease (ms), a prefix for the leases' names. Returns {granted, reason (0 none, 1 in
#: flight, 2 rate, 3 paused), wait (ms), leases...}.
ACQUIRE = """
local clock = redis.call('TIME')
local now = tonumber(clock[1]) * 1000 + math.floor(tonumber(clock[2]) / 1000)
local paused = redis.call('PTTL', KEYS[3])
if paused > 0 then return {0, 3, paused} end
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
local count = tonumber(ARGV[1])
local reason, wait = 0, 0
local free = tonumber(ARGV[2]) - redis.call('ZCARD', KEYS[1])
if free < count then
  count = math.max(free, 0)
  reason = 1
end
local rate = tonumber(ARGV[3])
if rate > 0 then
  local capacity = tonumber(ARGV[4])
  local bucket = redis.call('HMGET', KEYS[2], 'tokens', 'at')
  local tokens = tonumber(bucket[1]) or capacity
  local at = tonumber(bucket[2]) or now
  tokens = math.min(capacity, tokens + math.max(now - at, 0) * rate / 1000)
  if tokens < count then
    count = math.floor(tokens)
    reason = 2
  end
  tokens = tokens - count
  if reason == 2 then wait = math.ceil((1 - tokens) * 1000 / rate) end
  redis.call('HSET', KEYS[2], 'tokens', tostring(tokens), 'at', now)
  redis.call('PEXPIRE', KEYS[2], math.ceil(capacity * 1000 / rate) + 1000)
end
local answer = {count, reason, wait}
local lease = tonumber(ARGV[5])
for i = 1, count do
  local name = ARGV[6] .. i
  redis.call('ZADD', KEYS[1], now + lease, name)
  answer[#answer + 1] = name
end
if count > 0 then redis.call('PEXPIRE', KEYS[1], lease + 1000) end
return answer
"""
#: KEYS: the pause. ARGV: its length (ms). A longer pause already set stays.
PAUSE = """
if redis.call('PTTL', KEYS[1]) < tonumber(ARGV[1]) then
  redis.call('SET', KEYS[1], '1', 'PX', ARGV[1])
end
"""
_REASONS = {0: "", 1: IN_FLIGHT, 2: RATE, 3: PAUSED}


class RedisStore:
    def __init__(self, url: str):
        import redis

        self.client = redis.Redis.from_url(url, socket_timeout=1.0, socket_connect_timeout=1.0)
        self.acquire_script = self.client.register_script(ACQUIRE)
        self.pause_script = self.client.register_script(PAUSE)

    @staticmethod
    def keys(endpoint: str) -> list[str]:
        base = f"webhooks:limits:{{{endpoint}}}"  # one hash slot per endpoint (a cluster)
        return [f"{base}:in-flight", f"{base}:bucket", f"{base}:paused"]

    def acquire(self, endpoint: str, limits: Limits, count: int) -> Grant:
        answer = self.acquire_script(
            keys=self.keys(endpoint),
            args=[
                count,
                limits.max_in_flight,
                limits.max_per_second or 0,
                limits.capacity,
                int(lease_seconds() * 1000),
                secrets.token_hex(8) + ":",
            ],
        )
        granted, reason, wait = (int(value) for value in answer[:3])
        leases = [name.decode() for name in answer[3 : 3 + granted]]
        return Grant(leases, _REASONS[reason] if granted < count else "", wait / 1000)

    def release(self, endpoint: str, leases: list[str]) -> None:
        self.client.zrem(self.keys(endpoint)[0], *leases)

    def pause(self, endpoint: str, seconds: float) -> None:
        self.pause_script(keys=self.keys(endpoint)[2:], args=[math.ceil(seconds * 1000)])


# --- the database -----------------------------------------------------------------------------


class DatabaseStore:
    def acquire(self, endpoint: str, limits: Limits, count: int) -> Grant:
        with transaction.atomic():
            throttle = self._locked(endpoint)
            now = timezone.now()
            if throttle.not_before and throttle.not_before > now:
                return Grant([], PAUSED, (throttle.not_before - now).total_seconds())
            leases = EndpointLease.objects.filter(installation_id=endpoint)
            leases.filter(expires_at__lte=now).delete()
            held, wait = "", 0.0
            free = limits.max_in_flight - leases.count()
            if free < count:
                count, held = max(free, 0), IN_FLIGHT
            if limits.max_per_second:
                rate, capacity = limits.max_per_second, limits.capacity
                tokens = capacity
                if throttle.refilled_at is not None:
                    elapsed = max((now - throttle.refilled_at).total_seconds(), 0.0)
                    tokens = min(capacity, throttle.tokens + elapsed * rate)
                if tokens < count:
                    count, held = math.floor(tokens), RATE
                tokens -= count
                if held == RATE:
                    wait = (1 - tokens) / rate
                throttle.tokens, throttle.refilled_at = tokens, now
                throttle.save(update_fields=["tokens", "refilled_at"])
            expires = now + timedelta(seconds=lease_seconds())
            granted = [
                EndpointLease(
                    installation_id=endpoint, token=secrets.token_hex(16), expires_at=expires
                )
                for _ in range(count)
            ]
            EndpointLease.objects.bulk_create(granted)
            return Grant([lease.token for lease in granted], held, wait)

    @staticmethod
    def _locked(endpoint: str) -> EndpointThrottle:
        """The endpoint's throttle row, locked until the transaction ends (made if missing)."""
        rows = EndpointThrottle.objects.select_for_update()
        throttle = rows.filter(installation_id=endpoint).first()
        if throttle is None:
            EndpointThrottle.objects.bulk_create(
                [EndpointThrottle(installation_id=endpoint)], ignore_conflicts=True
            )
            throttle = rows.get(installation_id=endpoint)
        return throttle

    def release(self, endpoint: str, leases: list[str]) -> None:
        EndpointLease.objects.filter(installation_id=endpoint, token__in=leases).delete()

    def pause(self, endpoint: str, seconds: float) -> None:
        until = timezone.now() + timedelta(seconds=seconds)
        EndpointThrottle.objects.bulk_create(
            [EndpointThrottle(installation_id=endpoint)], ignore_conflicts=True
        )
        EndpointThrottle.objects.filter(installation_id=endpoint).exclude(
            not_before__gte=until
        ).update(not_before=until)


# --- Retry-After ------------------------------------------------------------------------------

#: The longest a receiver's Retry-After is waited for (seconds).
RETRY_AFTER_MAX = 60.0


def retry_after(headers: dict) -> float | None:
    """Seconds a response's ``Retry-After`` asks to wait (a number of seconds or an HTTP
    date), at most ``RETRY_AFTER_MAX``; None without one that parses."""
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
    return min(max(seconds, 0.0), RETRY_AFTER_MAX)
