"""The one retry policy of the outbox's consumers (the webhook drain and the runtime's
deliveries alike): what an attempt's outcome makes of its delivery, how many retries a
delivery gets and the delay before each.

A consumer says what its attempt came to, in its own terms mapped to three outcomes:
``SUCCEEDED``; ``RETRY``, a failure that may pass (a network error, a 5xx, the runtime host
unreachable or busy); ``FAILED``, one that would fail the same way again (a 4xx, the
integration's code raising). ``settle_result`` makes the delivery's ``Result`` of it:
succeeded; retrying after ``retry_delay`` while retries are left (``MAX_RETRIES`` after the
first attempt); else failed. Consumers never count retries nor compute delays themselves.

The schedule is the webhook specification's: the consumer's base delay times 1, 2, 4 (2^(n-1)
after attempt n), each times a uniform factor in [1 - ``JITTER``, 1 + ``JITTER``], so that
deliveries failing together (a receiver or the runtime host down) do not come back together.
It holds whatever the other side says (a 429's ``Retry-After`` included): only a consumer
whose recipient opted in to being waited for as it asks passes ``asked`` (seconds), which then
replaces the schedule's delay for that retry; the retry still counts as one of the
``MAX_RETRIES``.
"""

import random

from .leases import Result

SUCCEEDED, RETRY, FAILED = "succeeded", "retry", "failed"
#: Retries after the first attempt: a delivery is attempted at most 1 + MAX_RETRIES times.
MAX_RETRIES = 3
#: Each delay is spread by this fraction either side (the specification's +/-10 %).
JITTER = 0.1


def retries_left(attempts: int) -> bool:
    """Whether a delivery whose attempt number ``attempts`` (1-based) may pass is retried."""
    return attempts <= MAX_RETRIES


def retry_delay(base: float, failed_attempt: int) -> float:
    """Seconds before the retry after attempt ``failed_attempt`` (1-based): base * 2^(n-1),
    times a uniform factor in [1 - JITTER, 1 + JITTER]."""
    delay = base * 2 ** (failed_attempt - 1)
    return delay * random.uniform(1 - JITTER, 1 + JITTER)  # noqa: S311 - jitter, not a secret


def settle_outcome(outcome: str, attempts: int) -> str:
    """What attempt number ``attempts`` that came to ``outcome`` is, after the policy: the
    outcome itself, but ``FAILED`` for a ``RETRY`` with no retry left (an attempt log's
    outcome)."""
    if outcome == RETRY and not retries_left(attempts):
        return FAILED
    return outcome


def settle_result(
    outcome: str,
    *,
    attempts: int,
    base_delay: float,
    error: str = "",
    done: str = "",
    duration_ms: int | None = None,
    log=(),
    asked: float | None = None,
) -> Result:
    """The delivery's ``Result`` after attempt number ``attempts`` came to ``outcome``:
    ``done`` is the outcome text of a succeeded (or failed) delivery, ``error`` the failure's
    reason; a retry comes after ``retry_delay(base_delay, attempts)``, or after ``asked``
    seconds when the consumer passes the wait its recipient asked for and opted in to."""
    settled = settle_outcome(outcome, attempts)
    if settled == SUCCEEDED:
        return Result.succeeded(outcome=done, attempts=attempts, duration_ms=duration_ms, log=log)
    if settled == RETRY:
        return Result.retry(
            retry_in=retry_delay(base_delay, attempts) if asked is None else asked,
            error=error,
            attempts=attempts,
            duration_ms=duration_ms,
            log=log,
        )
    return Result.failed(
        error=error, outcome=done, attempts=attempts, duration_ms=duration_ms, log=log
    )
