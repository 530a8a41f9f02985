"""Rate limits per client address for what visitors send (a site's feedback, block presses,
the sites' and the platform's searches): ``SITE_RATES[scope]``, counted in the shared cache
(``docplatform.rate_limits``), so every web process counts the same requests."""

from django.conf import settings

from .rate_limits import parse_rate
from .rate_limits import wait_seconds as window_wait


def wait_seconds(scope: str, address: str) -> int:
    """Count one request of ``scope`` (a key of ``SITE_RATES``: ``feedback``, ``blocks``,
    ``search``) from ``address``; 0 when it is within the rate, else how many seconds until
    the window ends."""
    allowed, period = parse_rate(settings.SITE_RATES[scope])
    return window_wait(f"site:{scope}:{address}", allowed, period)
