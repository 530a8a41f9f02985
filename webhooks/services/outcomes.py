"""What an attempt makes of its delivery after the outbox's one retry policy
(``docplatform.events.retries``): the outcome of a response, the delay before a retry, a 429's
``Retry-After``, and settling the deliveries whose attempts ended with their log rows."""

import dataclasses
import logging

from django.conf import settings
from django.db import DatabaseError

from docplatform.events import retries
from docplatform.events.leases import Result, deliveries_settle
from docplatform.events.models import Delivery

from ..models import DeliveryAttempt
from ..transport import limits
from ..transport.sending import REFUSED

logger = logging.getLogger(__name__)


def classify_response(status_code: int | None) -> str:
    """The one rule for a delivery attempt's outcome, in the retry policy's terms
    (``docplatform.events.retries``): ``succeeded``, ``retry`` or ``failed``.

    ``None`` stands for a network error or a timeout. 2xx succeeds; 429, 5xx and network
    errors are retried; 3xx (redirects are never followed) and other 4xx fail at once.
    """
    if status_code is None:
        return retries.RETRY
    if 200 <= status_code < 300:
        return retries.SUCCEEDED
    if status_code == 429 or 500 <= status_code < 600:
        return retries.RETRY
    return retries.FAILED


def retry_delay(failed_attempt: int) -> float:
    """Seconds before a webhook's retry after attempt ``failed_attempt`` (1-based): the retry
    policy's schedule on ``WEBHOOK_RETRY_BASE_DELAY`` (1x, 2x, 4x it, +/-10 %)."""
    return retries.retry_delay(settings.WEBHOOK_RETRY_BASE_DELAY, failed_attempt)


def waits_for_retry_after(configuration: dict) -> bool:
    """Whether an endpoint opted in to being waited for as its 429s' ``Retry-After`` asks (its
    configuration's ``retry_after``; off by default: the specification's schedule holds)."""
    return configuration.get("retry_after") is True


def retry_after(attempt: DeliveryAttempt) -> float | None:
    """Seconds a 429 attempt's ``Retry-After`` asks to wait (at most
    ``WEBHOOK_RETRY_AFTER_MAX``), when its endpoint opted in to it; else None."""
    if attempt.status_code != 429:
        return None
    if not waits_for_retry_after(attempt.delivery.installation.configuration):
        return None
    return limits.retry_after(attempt.response_headers)


def settle(ended: list[tuple[Delivery, DeliveryAttempt]]) -> None:
    """Settle deliveries whose attempt ended, each attempt row written with its delivery's
    new state (see ``leases.deliveries_settle``)."""
    if ended:
        settle_quietly([(delivery, _result(delivery, attempt)) for delivery, attempt in ended])


def settle_quietly(results: list[tuple[Delivery, Result]]) -> list[Delivery]:
    """Settle; a database failure is logged, not raised: nothing of these results was
    written, and the deliveries come back when their lease runs out."""
    try:
        return deliveries_settle(results)
    except DatabaseError:
        logger.exception(
            "webhook deliveries %s: not settled, left to their lease",
            [delivery.pk for delivery, _ in results],
        )
        return []


def _result(delivery: Delivery, attempt: DeliveryAttempt) -> Result:
    """What the attempt makes of the delivery after the retry policy
    (``docplatform.events.retries``): done, or a retry after its delay. The attempt records
    the same: ``succeeded``, ``retry`` (with the delay) or ``failed`` (the last attempt of a
    delivery that failed); it is written with the delivery's new state."""
    number = attempt.number
    status_code = attempt.status_code
    refused = attempt.error.startswith(REFUSED)
    outcome = retries.FAILED if refused else classify_response(status_code)
    detail = attempt.error or (f"HTTP {status_code}" if status_code else "")
    attempt.outcome = retries.settle_outcome(outcome, number)
    if outcome == retries.SUCCEEDED:
        done = f"HTTP {status_code}"
    else:
        gave_up = " after the last retry" if outcome == retries.RETRY else ""
        done = f"{detail}{gave_up}"
    # The specification's schedule, whatever a 429 says; an endpoint that opted in is waited
    # for as it asked instead (up to WEBHOOK_RETRY_AFTER_MAX), the attempt counting as one.
    wait = retry_after(attempt)
    result = retries.settle_result(
        outcome,
        attempts=number,
        base_delay=settings.WEBHOOK_RETRY_BASE_DELAY,
        error=detail,
        done=done,
        log=[attempt],
        asked=wait,
    )
    if wait is not None and attempt.outcome == retries.RETRY:
        asked = f"HTTP 429, held back as the receiver asked: Retry-After {wait:g} s"
        result = dataclasses.replace(result, error=asked)
        attempt.error = asked
    if attempt.outcome == retries.RETRY:
        attempt.next_delay = result.retry_in
    return result
