"""Rate limits counted in the shared cache (``settings.cache``), so every web process and
machine counts the same requests: N processes allow what one allows.

A limit of ``n/period`` is a fixed window: the requests of one key (a scope and a client
address, or a user) are counted per window of ``period`` seconds, aligned to the clock, and
the ``n+1``-th within a window is refused until it ends. The count is one atomic increment
(Redis's ``INCR`` in a script that sets a new counter's expiry; the database cache's,
``cache_backends``), never a read and a write.
The sites' limits (``visitor_rates``) and the API's throttles (``api.throttles``) count here.
"""

import time

from django.core.cache import cache

PERIODS = {"second": 1, "minute": 60, "hour": 3600, "day": 86400}


def parse_rate(rate: str) -> tuple[int, int]:
    """``"30/minute"`` -> (30, 60): requests allowed, per this many seconds."""
    number, _, period = rate.partition("/")
    return int(number), PERIODS[period]


def counted(key: str, seconds: int) -> int:
    """Add one to the counter ``key`` (made, at 0, to live ``seconds``); its new value. Redis
    counts in one round trip (``cache_backends.RedisCache.count``); another cache by an add
    and an atomic increment."""
    count = getattr(cache, "count", None)
    if count is not None:
        return count(key, seconds)
    for _ in range(3):
        cache.add(key, 0, seconds)
        try:
            return cache.incr(key)
        except ValueError:  # expired (or evicted) between add and incr: make it again
            continue
    raise RuntimeError(f"the cache does not keep the counter {key!r}")


def wait_seconds(key: str, allowed: int, period: int) -> int:
    """Count one request of ``key``: 0 when it is within ``allowed`` per ``period`` seconds,
    else how many seconds until the window ends (at least 1)."""
    now = time.time()
    window = int(now // period)
    if counted(f"rate:{key}:{period}:{window}", period + 1) <= allowed:
        return 0
    return max(1, int((window + 1) * period - now))
