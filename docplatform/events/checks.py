"""System checks of the outbox's settings against what its consumers registered."""

import math

from django.conf import settings
from django.core import checks

from .registry import consumer_named, consumer_names

#: How much longer than a consumer's longest hold the lease must be: the settle's own time.
LEASE_MARGIN_SECONDS = 2.0


@checks.register()
def lease_outlasts_attempts(app_configs=None, **kwargs) -> list[checks.Error]:
    """``DELIVERY_LEASE_SECONDS`` must outlast the longest a consumer may hold a delivery
    (an attempt to its deadline): a lease that runs out mid-attempt lets another worker claim
    the delivery and send it a second time."""
    lease = settings.DELIVERY_LEASE_SECONDS
    errors = []
    for name in consumer_names():
        needed = consumer_named(name).longest_hold() + LEASE_MARGIN_SECONDS
        if lease < needed:
            errors.append(
                checks.Error(
                    f"DELIVERY_LEASE_SECONDS ({lease:g} s) is shorter than a delivery of the "
                    f"{name} consumer may be held ({needed - LEASE_MARGIN_SECONDS:g} s, its "
                    f"timeouts) plus {LEASE_MARGIN_SECONDS:g} s: a delivery still being "
                    "attempted would be claimed again by another worker and sent twice.",
                    hint=f"Set DELIVERY_LEASE_SECONDS to {math.ceil(needed)} or more, or "
                    "shorten that consumer's timeouts.",
                    id="docplatform.E100",
                )
            )
    return errors
