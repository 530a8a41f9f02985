"""The login throttle's answer to a refused sign-in (django-axes; the rule itself is set in
settings, "Hardened defaults"): 429, when to try again in words, and ``Retry-After``."""

import math
from datetime import datetime, timedelta

from axes.handlers.proxy import AxesProxyHandler
from axes.helpers import get_cool_off, get_failure_limit
from django.shortcuts import render
from django.utils import timezone
from django.utils.timesince import timeuntil

LOCKOUT_TEMPLATE = "marketplace/locked_out.html"


def lockout_ends(request, credentials=None) -> datetime | None:
    """When the lockout that refuses this sign-in ends, or None when none does.

    Axes adds up the failures of the attempts in the cool-off window, per lockout parameter
    (the address, the username). Newest first, the attempts that reach the failure limit
    keep the lock until the oldest of them leaves the window.
    """
    AxesProxyHandler.update_request(request)
    handler = AxesProxyHandler.get_implementation()
    limit = get_failure_limit(request, credentials)
    cool_off = get_cool_off(request)
    ends = []
    for attempts in handler.get_user_attempts(request, credentials):
        failures = 0
        for attempt_time, count in attempts.order_by("-attempt_time").values_list(
            "attempt_time", "failures_since_start"
        ):
            failures += count
            if failures >= limit:
                ends.append(attempt_time + cool_off)
                break
    return max(ends, default=None)


def lockout_response(request, original_response=None, credentials=None):
    """AXES_LOCKOUT_CALLABLE: the page a locked-out sign-in gets, on the marketplace's and
    the admin's login alike."""
    now = timezone.now()
    ends = lockout_ends(request, credentials) or now + get_cool_off(request)
    seconds = max(1, math.ceil((ends - now).total_seconds()))
    context = {
        "retry_at": ends,
        # Whole minutes, rounded up: "15 minutes" rather than "14 minutes" a second later.
        "retry_in": timeuntil(now + timedelta(minutes=math.ceil(seconds / 60)), now),
        "failure_limit": get_failure_limit(request, credentials),
    }
    response = render(request, LOCKOUT_TEMPLATE, context, status=429)
    response["Retry-After"] = str(seconds)
    return response
