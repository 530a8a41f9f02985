"""Runtime deliveries: platform events taken to the integration's code in the runtime host."""

from django.conf import settings

from docplatform.events.outbox import ClaimReads, Result, delivery_settle, delivery_start

from ..gateway.client import call_runtime
from ..gateway.envelopes import platform_event
from ..gateway.failures import IntegrationFault, PlatformFault
from ..policies import runnable_version

MAX_RETRIES = 3
#: What a claim reads with each delivery: the event and the installation (with the
#: organization installation above it), and the integration's current version, whose code
#: goes to the runtime host only when it asks (a deferred read then).
CLAIM_READS = ClaimReads(
    related=("event", "installation__integration__latest_version", "installation__parent"),
    deferred=("installation__integration__latest_version__bundle",),
)


def runtime_deliver(delivery_id: int) -> None:
    """Dispatch one event to the installation's integration and record the outcome.

    The host unreachable: retried (2, 4, 8 s). The integration failing (an exception, a
    crash, its time limit): recorded as failed with the reason, not retried — the code would
    fail the same way.
    """
    delivery = delivery_start(delivery_id, reads=CLAIM_READS)
    if delivery is None:
        return
    version = runnable_version(delivery.installation.integration)
    if version is None:
        delivery_settle(
            delivery, Result.succeeded(outcome="the integration has no script: nothing to run")
        )
        return
    attempts = delivery.attempts + 1
    try:
        answer = call_runtime(
            platform_event(delivery), version=version, installation=delivery.installation
        )
    except PlatformFault as failure:
        if attempts <= MAX_RETRIES:
            delay = settings.RUNTIME_RETRY_BASE_DELAY * 2 ** (attempts - 1)
            result = Result.retry(retry_in=delay, error=failure.message, attempts=attempts)
        else:
            result = Result.failed(error=failure.message, attempts=attempts)
    except IntegrationFault as failure:
        result = Result.failed(
            error=failure.explained[:2000], attempts=attempts, duration_ms=failure.duration_ms
        )
    else:
        handled = answer.status == 200 and answer.json().get("handled") is True
        result = Result.succeeded(
            outcome="handled" if handled else "the integration has no handler for this event",
            attempts=attempts,
            duration_ms=answer.duration_ms,
        )
    delivery_settle(delivery, result)
