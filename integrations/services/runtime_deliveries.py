"""Runtime deliveries: platform events taken to the integration's code in the runtime host."""

from django.conf import settings

from docplatform import events

from ..models import Delivery
from ..policies import runnable_version
from ..runtime_client import RuntimeUnavailable, call_runtime
from .deliveries import (
    delivery_finish,
    delivery_retry_later,
    delivery_start,
)

MAX_RETRIES = 3


def runtime_deliver(delivery_id: int) -> None:
    """Dispatch one event to the installation's integration and record the outcome.

    The host unreachable: retried (2, 4, 8 s). The integration failing (an exception, a
    crash, its time limit): recorded as failed with the reason, not retried — the code would
    fail the same way.
    """
    delivery = delivery_start(delivery_id)
    if delivery is None:
        return
    version = runnable_version(delivery.installation.integration)
    if version is None:
        delivery_finish(
            delivery,
            status=Delivery.Status.SUCCEEDED,
            outcome="the integration has no script: nothing to run",
        )
        return
    delivery.attempts += 1
    try:
        answer = call_runtime(
            events.payload_for(delivery.event, delivery),
            version=version,
            installation=delivery.installation,
        )
    except RuntimeUnavailable as exc:
        if delivery.attempts <= MAX_RETRIES:
            delay = settings.RUNTIME_RETRY_BASE_DELAY * 2 ** (delivery.attempts - 1)
            delivery_retry_later(delivery, delay=delay, error=str(exc))
        else:
            delivery_finish(delivery, status=Delivery.Status.FAILED, error=str(exc))
        return
    delivery.duration_ms = answer.duration_ms
    if answer.failure:
        detail = answer.json().get("message") if answer.outcome == "integration_error" else None
        error = f"{answer.failure}: {detail}" if detail else answer.failure
        delivery_finish(delivery, status=Delivery.Status.FAILED, error=error[:2000])
        return
    handled = answer.status == 200 and answer.json().get("handled") is True
    delivery_finish(
        delivery,
        status=Delivery.Status.SUCCEEDED,
        outcome="handled" if handled else "the integration has no handler for this event",
    )
