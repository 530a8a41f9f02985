"""Rate limits per client address for what a site's visitors send (feedback, block presses):
a counter per address and window in the cache, as the API's throttles count."""

import time

from django.conf import settings
from django.core.cache import cache

PERIODS = {"second": 1, "minute": 60, "hour": 3600, "day": 86400}


def parse_rate(rate: str) -> tuple[int, int]:
    """``"30/minute"`` -> (30, 60): requests allowed, per this many seconds."""
    number, _, period = rate.partition("/")
    return int(number), PERIODS[period]


def wait_seconds(scope: str, address: str) -> int:
    """Count one request of ``scope`` (``feedback``, ``blocks``) from ``address``; 0 when it
    is within ``SITE_RATES[scope]``, else how many seconds until the window ends."""
    allowed, period = parse_rate(settings.SITE_RATES[scope])
    now = time.time()
    window = int(now // period)
    key = f"site-rate:{scope}:{address}:{window}"
    cache.add(key, 0, period + 1)
    try:
        count = cache.incr(key)
    except ValueError:  # expired between add and incr
        cache.set(key, 1, period + 1)
        count = 1
    if count <= allowed:
        return 0
    return max(1, int((window + 1) * period - now))
