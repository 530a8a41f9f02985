"""The REST API's throttles (``REST_FRAMEWORK``'s defaults, ``settings.api``): DRF's anonymous
(per client address) and per-user rates, counted in the shared cache by one atomic increment
per request (``docplatform.rate_limits``), so every web process counts the same calls. DRF's
own keep a list of times per caller that each process reads and writes back whole: two
processes at once both write theirs, and the caller gets more calls than the rate."""

from rest_framework import throttling

from ..rate_limits import wait_seconds


class SharedWindow:
    """A DRF rate throttle counting in fixed windows of its period (``rate_limits``)."""

    def allow_request(self, request, view):
        if self.rate is None:
            return True
        key = self.get_cache_key(request, view)
        if key is None:
            return True
        self.wait_for = wait_seconds(key, self.num_requests, self.duration)
        return self.wait_for == 0

    def wait(self):
        return self.wait_for


class AnonRateThrottle(SharedWindow, throttling.AnonRateThrottle):
    """Callers not signed in, per client address: ``API_THROTTLE_ANON``."""


class UserRateThrottle(SharedWindow, throttling.UserRateThrottle):
    """Signed-in callers (and tokens), per user; else per address: ``API_THROTTLE_USER``."""
