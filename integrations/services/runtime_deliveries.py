"""Runtime deliveries: platform events taken to the integration's code in the runtime host."""

import random
import time

from django.conf import settings

from docplatform.events import retries
from docplatform.events.leases import (
    ClaimReads,
    Result,
    delivery_settle,
    delivery_start,
    delivery_take_turn,
)
from docplatform.observability.metrics import attempt_observed
from docplatform.observability.tracing import span

from ..gateway.client import call_runtime
from ..gateway.envelopes import platform_event
from ..gateway.failures import IntegrationFault, PlatformFault
from ..policies import runnable_version
from ..runtime.protocol import BUSY  # the integration's workers stayed busy: worth retrying

#: What a claim reads with each delivery: the event and the installation (with the
#: organization installation above it), and the integration's released, development and
#: shared versions, whose code goes to the runtime host only when it asks (a deferred read then).
CLAIM_READS = ClaimReads(
    related=(
        "event",
        "installation__integration__released_version",
        "installation__integration__development_version",
        "installation__integration__shared_version",
        "installation__parent",
    ),
    deferred=tuple(
        f"installation__integration__{version}__{field}"
        for version in ("released_version", "development_version", "shared_version")
        for field in ("bundle", "listing")
    ),
)


def longest_hold() -> float:
    """The longest a worker holds a runtime delivery it claimed: its call to the runtime host,
    to the connect and response timeouts."""
    return settings.RUNTIME_CONNECT_TIMEOUT + settings.RUNTIME_RESPONSE_TIMEOUT


def runtime_deliver(delivery_id: int) -> None:
    """Dispatch one event to the installation's integration and record the outcome.

    The host unreachable or silent past ``RUNTIME_RESPONSE_TIMEOUT``, the integration's
    workers busy, or its worker killed from outside during the call (``worker_lost``: the
    OOM killer, a host's shutdown): retried after about 2, 4, 8 s (the outbox's one retry
    policy, ``docplatform.events.retries``). The integration failing (an
    exception, a crash, its time limit): recorded as failed with the reason, not retried —
    the code would fail the same way. An integration already running
    ``RUNTIME_INTEGRATION_CONCURRENCY`` deliveries (a hanging one, say) gets no more worker
    slots: the delivery is postponed (not failed), so other integrations' deliveries are not
    held up behind it.
    """
    delivery = delivery_start(delivery_id, reads=CLAIM_READS)
    if delivery is None:
        return
    integration = delivery.installation.integration
    version = runnable_version(integration, delivery.installation)
    if version is None:
        delivery_settle(
            delivery, Result.succeeded(outcome="the integration has no script: nothing to run")
        )
        return
    limit = settings.RUNTIME_INTEGRATION_CONCURRENCY
    if not delivery_take_turn(delivery, limit=limit, installation__integration_id=integration.pk):
        delay = settings.RUNTIME_RETRY_BASE_DELAY * random.uniform(0.5, 1.5)  # noqa: S311
        delivery_settle(delivery, Result.postponed(retry_in=delay, requeue=True))
        return
    attempts = delivery.attempts + 1
    started = time.perf_counter()
    try:
        # The event's trace (tracing on), continued from the request that fired it.
        with span("runtime delivery", parent=delivery.event.traceparent, kind="consumer"):
            answer = call_runtime(
                platform_event(delivery), version=version, installation=delivery.installation
            )
    except (PlatformFault, IntegrationFault) as failure:
        result = _failed(failure, attempts)
    else:
        handled = answer.status == 200 and answer.json().get("handled") is True
        result = retries.settle_result(
            retries.SUCCEEDED,
            attempts=attempts,
            base_delay=settings.RUNTIME_RETRY_BASE_DELAY,
            done="handled" if handled else "the integration has no handler for this event",
            duration_ms=answer.duration_ms,
        )
    attempt_observed(delivery.consumer, time.perf_counter() - started)
    delivery_settle(delivery, result)


def _failed(failure: PlatformFault | IntegrationFault, attempts: int) -> Result:
    """A retry for what may pass (the platform's faults: the host unreachable, a worker lost;
    the integration's workers busy); else, or after the last retry, failed (the outbox's
    retry policy, ``docplatform.events.retries``, decides which and when)."""
    passing = isinstance(failure, PlatformFault) or failure.code == BUSY
    return retries.settle_result(
        retries.RETRY if passing else retries.FAILED,
        attempts=attempts,
        base_delay=settings.RUNTIME_RETRY_BASE_DELAY,
        error=failure.explained[:2000],
        duration_ms=failure.duration_ms,
    )
