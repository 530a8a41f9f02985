"""Where an endpoint's limits are held (``WEBHOOK_LIMITS_URL``; see ``limits``): Redis (one
Lua script per acquisition, on the Redis server's clock) or the database (a locked
``EndpointThrottle`` row and ``EndpointLease`` rows). Both decide as ``limits.fair_count``
says."""

import functools
import math
import secrets
from datetime import timedelta

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from ..models import EndpointLease, EndpointThrottle
from .limits import (
    IN_FLIGHT,
    PAUSED,
    RATE,
    WAITER_SECONDS,
    Grant,
    Limits,
    fair_count,
    lease_seconds,
)


@functools.cache
def _store_for(url: str, prefix: str):
    return DatabaseStore() if url == "database" else RedisStore(url, prefix)


def store():
    """The store ``WEBHOOK_LIMITS_URL`` names, its Redis keys under
    ``WEBHOOK_LIMITS_KEY_PREFIX`` (one per process, URL and prefix)."""
    return _store_for(settings.WEBHOOK_LIMITS_URL, settings.WEBHOOK_LIMITS_KEY_PREFIX)


# --- Redis ------------------------------------------------------------------------------------

#: KEYS: the leases (a sorted set by expiry, ms; each named after its holder), the bucket (a
#: hash), the pause (a key with a time to live), the holders waiting (a sorted set by when
#: they stop counting, ms). ARGV: slots asked, max in flight, the rate (0: none), the bucket's
#: capacity, the lease (ms), the holder, a random part for the leases' names, how long a
#: waiter counts (ms). Returns {granted, reason (0 none, 1 in flight, 2 rate, 3 paused),
#: wait (ms), other holders waiting, leases...}. The fair share is ``fair_count``'s.
ACQUIRE = """
local clock = redis.call('TIME')
local now = tonumber(clock[1]) * 1000 + math.floor(tonumber(clock[2]) / 1000)
local holder = ARGV[6]
local function wait_in_line()
  redis.call('ZADD', KEYS[4], now + tonumber(ARGV[8]), holder)
  redis.call('PEXPIRE', KEYS[4], tonumber(ARGV[8]) + 1000)
end
local paused = redis.call('PTTL', KEYS[3])
if paused > 0 then return {0, 3, paused, 0} end
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
redis.call('ZREMRANGEBYSCORE', KEYS[4], '-inf', now)
local asked = tonumber(ARGV[1])
local limit = tonumber(ARGV[2])
local leases = redis.call('ZRANGE', KEYS[1], 0, -1)
local mine = 0
for _, name in ipairs(leases) do
  if string.sub(name, 1, #holder + 1) == holder .. ':' then mine = mine + 1 end
end
local others = redis.call('ZCARD', KEYS[4])
if redis.call('ZSCORE', KEYS[4], holder) then others = others - 1 end
local count = math.max(math.min(asked, limit - #leases), 0)
if others > 0 then
  count = math.min(count, math.max(math.ceil(limit / (others + 1)) - mine, 0))
end
local reason, wait = 0, 0
if count < asked then reason = 1 end
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
if count < asked then wait_in_line() else redis.call('ZREM', KEYS[4], holder) end
local answer = {count, reason, wait, others}
local lease = tonumber(ARGV[5])
for i = 1, count do
  local name = holder .. ':' .. ARGV[7] .. i
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
    def __init__(self, url: str, prefix: str = ""):
        import redis

        self.prefix = prefix
        self.client = redis.Redis.from_url(url, socket_timeout=1.0, socket_connect_timeout=1.0)
        self.acquire_script = self.client.register_script(ACQUIRE)
        self.pause_script = self.client.register_script(PAUSE)

    def keys(self, endpoint: str) -> list[str]:
        # One hash slot per endpoint (a cluster).
        base = f"{self.prefix}webhooks:limits:{{{endpoint}}}"
        return [f"{base}:in-flight", f"{base}:bucket", f"{base}:paused", f"{base}:waiting"]

    def acquire(self, endpoint: str, limits: Limits, count: int, *, holder: str) -> Grant:
        answer = self.acquire_script(
            keys=self.keys(endpoint),
            args=[
                count,
                limits.max_in_flight,
                limits.max_per_second or 0,
                limits.capacity,
                int(lease_seconds() * 1000),
                holder,
                secrets.token_hex(8) + ":",
                int(WAITER_SECONDS * 1000),
            ],
        )
        granted, reason, wait, others = (int(value) for value in answer[:4])
        leases = [name.decode() for name in answer[4 : 4 + granted]]
        held = _REASONS[reason] if granted < count else ""
        return Grant(leases, held, wait / 1000, others=others)

    def release(self, endpoint: str, leases: list[str]) -> None:
        self.client.zrem(self.keys(endpoint)[0], *leases)

    def pause(self, endpoint: str, seconds: float) -> None:
        self.pause_script(keys=self.keys(endpoint)[2:3], args=[math.ceil(seconds * 1000)])


# --- the database -----------------------------------------------------------------------------


class DatabaseStore:
    def acquire(self, endpoint: str, limits: Limits, count: int, *, holder: str) -> Grant:
        with transaction.atomic():
            throttle = self._locked(endpoint)
            now = timezone.now()
            if throttle.not_before and throttle.not_before > now:
                return Grant([], PAUSED, (throttle.not_before - now).total_seconds())
            leases = EndpointLease.objects.filter(installation_id=endpoint)
            leases.filter(expires_at__lte=now).delete()
            holders = list(leases.values_list("holder", flat=True))
            stamp = now.timestamp()
            waiting = {name: until for name, until in throttle.waiting.items() if until > stamp}
            asked, wait, others = count, 0.0, len(waiting.keys() - {holder})
            count = fair_count(
                asked,
                free=limits.max_in_flight - len(holders),
                mine=holders.count(holder),
                others=others,
                max_in_flight=limits.max_in_flight,
            )
            held = IN_FLIGHT if count < asked else ""
            changed = []
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
                changed += ["tokens", "refilled_at"]
            if count < asked:
                waiting[holder] = stamp + WAITER_SECONDS
            else:
                waiting.pop(holder, None)
            if waiting != throttle.waiting:
                throttle.waiting = waiting
                changed.append("waiting")
            if changed:
                throttle.save(update_fields=changed)
            expires = now + timedelta(seconds=lease_seconds())
            granted = [
                EndpointLease(
                    installation_id=endpoint,
                    holder=holder,
                    token=secrets.token_hex(16),
                    expires_at=expires,
                )
                for _ in range(count)
            ]
            EndpointLease.objects.bulk_create(granted)
            return Grant([lease.token for lease in granted], held, wait, others=others)

    @staticmethod
    def _locked(endpoint: str) -> EndpointThrottle:
        """The endpoint's throttle row, locked until the transaction ends (made if missing)."""
        rows = EndpointThrottle.objects.select_for_update(no_key=True)
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
