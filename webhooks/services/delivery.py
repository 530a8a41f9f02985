"""Webhook delivery: claim due deliveries, POST them signed (a batch at once), log each
attempt, classify its outcome and settle the delivery (done, or retried on the schedule);
the test ping; purging finished deliveries."""

import functools
import json
import logging
import random
import time
from concurrent.futures import ThreadPoolExecutor
from datetime import timedelta

from django.conf import settings
from django.utils import timezone
from docplatform_sdk import signing

from docplatform import events
from docplatform.events.models import Delivery
from docplatform.events.outbox import (
    ClaimReads,
    Result,
    deliveries_settle,
    deliveries_start_due,
    delivery_start,
    drain_release,
    drain_request,
)
from integrations.models import Installation

from ..models import DeliveryAttempt
from ..outbound import SendError, Target, UnsafeURL, check_url, post
from .publication import PING
from .signing_secrets import signing_secrets_for

logger = logging.getLogger(__name__)

WEBHOOK_CONSUMER = "webhook"
#: What a claim reads with each delivery: its event and installation (with the organization
#: installation above it); never the integration's code, nor the installations' encrypted
#: credentials and API token.
CLAIM_READS = ClaimReads(
    related=("event", "installation__parent"),
    deferred=tuple(
        f"{installation}__{column}"
        for installation in ("installation", "installation__parent")
        for column in ("credentials", "api_token")
    ),
)
MAX_RETRIES = 3
RESPONSE_BODY_KEPT = 1024
USER_AGENT = "docplatform-webhooks/1.0"


def classify_response(status_code: int | None) -> str:
    """The one rule for a delivery attempt's outcome: ``succeeded``, ``retry`` or ``failed``.

    ``None`` stands for a network error or a timeout. 2xx succeeds; 429, 5xx and network
    errors are retried; 3xx (redirects are never followed) and other 4xx fail at once.
    """
    if status_code is None:
        return "retry"
    if 200 <= status_code < 300:
        return "succeeded"
    if status_code == 429 or 500 <= status_code < 600:
        return "retry"
    return "failed"


def retry_delay(failed_attempt: int) -> float:
    """Seconds before the retry after attempt ``failed_attempt`` (1-based): base * 2^(n-1),
    times a uniform factor in [0.9, 1.1] (the specification's jitter of +/-10 %)."""
    base = settings.WEBHOOK_RETRY_BASE_DELAY * 2 ** (failed_attempt - 1)
    return base * random.uniform(0.9, 1.1)  # noqa: S311 - jitter, not a secret


def request_body(delivery: Delivery) -> bytes:
    """The JSON body: the same bytes on every attempt and redelivery of the delivery."""
    payload = events.payload_for(delivery.event, delivery)
    return json.dumps(payload, separators=(",", ":"), ensure_ascii=False).encode()


def webhook_deliver(delivery_id: int) -> None:
    """One attempt of one delivery: a retry at its countdown, or one the sweeper sends."""
    delivery = delivery_start(delivery_id, reads=CLAIM_READS)
    if delivery is not None:
        webhook_attempt([delivery])


def webhook_deliver_due(rank: int = 0) -> int:
    """The drain: attempt every due webhook delivery, a batch at a time, until a claim finds
    none (or ``WEBHOOK_DRAIN_SECONDS`` passed: then a new drain takes over). Until it caught
    up, its drain request stays set, so what commits meanwhile joins one of its next batches
    instead of queueing another task. A drain whose first batch is full asks another worker
    slot to share the backlog (``rank`` counts the drains before it, up to
    ``WEBHOOK_PARALLEL_DRAINS``). Returns how many deliveries it claimed."""
    size = settings.WEBHOOK_BATCH_SIZE
    deadline = time.monotonic() + settings.WEBHOOK_DRAIN_SECONDS
    claimed_so_far, released = 0, False
    while True:
        claimed, deliveries = deliveries_start_due(WEBHOOK_CONSUMER, limit=size, reads=CLAIM_READS)
        if claimed == size and not claimed_so_far and rank + 1 < settings.WEBHOOK_PARALLEL_DRAINS:
            drain_request(WEBHOOK_CONSUMER, force=True, args=[rank + 1])
        webhook_attempt(deliveries)
        claimed_so_far += claimed
        if not claimed:
            if released:
                return claimed_so_far
            drain_release(WEBHOOK_CONSUMER)  # then one more claim, for what committed before
            released = True
        elif time.monotonic() > deadline:
            drain_release(WEBHOOK_CONSUMER)
            drain_request(WEBHOOK_CONSUMER)  # the next drain takes over
            return claimed_so_far


def webhook_attempt(deliveries: list[Delivery]) -> None:
    """Make one attempt of each claimed delivery, the POSTs at once (one slow receiver does
    not hold up the others), then log the attempts and settle the deliveries: finished, or
    retried at their countdown."""
    if not deliveries:
        return
    secrets = signing_secrets_for([delivery.installation for delivery in deliveries])
    targets: dict[str, Target | UnsafeURL] = {}  # one resolution per URL and batch

    def attempt_one(delivery: Delivery) -> DeliveryAttempt:
        return _attempt(delivery, secrets[delivery.installation_id], targets)

    if len(deliveries) == 1:
        attempts = [attempt_one(deliveries[0])]
    else:
        attempts = list(_senders().map(attempt_one, deliveries))
    finished_at = timezone.now()
    results = [
        (delivery, _result(delivery, attempt, finished_at))
        for delivery, attempt in zip(deliveries, attempts, strict=True)
    ]
    DeliveryAttempt.objects.bulk_create(attempts)
    deliveries_settle(results)


@functools.cache
def _senders() -> ThreadPoolExecutor:
    """The threads that make a worker process's POSTs; they start as needed and are kept."""
    return ThreadPoolExecutor(
        max_workers=settings.WEBHOOK_SENDERS, thread_name_prefix="webhook-sender"
    )


def _attempt(delivery: Delivery, secrets: list[str], targets: dict) -> DeliveryAttempt:
    """POST the delivery and record how it went in a new (unsaved) attempt."""
    url = delivery.installation.configuration.get("url")
    attempt = DeliveryAttempt(
        delivery=delivery,
        chain=delivery.chain,
        number=delivery.attempts + 1,
        started_at=timezone.now(),
        url=str(url or "")[:2048],
    )
    started = time.perf_counter()
    _send(delivery, secrets, _target(url, targets), attempt)
    attempt.duration_ms = int((time.perf_counter() - started) * 1000)
    return attempt


def _result(delivery: Delivery, attempt: DeliveryAttempt, finished_at) -> Result:
    """What the attempt's outcome makes of the delivery: done, or a retry after its delay
    (the attempt records the outcome and the delay too)."""
    attempts = attempt.number
    status_code = attempt.status_code
    outcome = "failed" if attempt.outcome == "refused" else classify_response(status_code)
    attempt.outcome = attempt.outcome or outcome
    detail = attempt.error or (f"HTTP {status_code}" if status_code else "")
    if outcome == "retry" and attempts <= MAX_RETRIES:
        attempt.next_delay = retry_delay(attempts)
        return Result.retry(retry_in=attempt.next_delay, error=detail, attempts=attempts)
    if outcome == "succeeded":
        return Result.succeeded(outcome=f"HTTP {status_code}", attempts=attempts, at=finished_at)
    gave_up = " after the last retry" if outcome == "retry" else ""
    return Result.failed(
        outcome=f"{detail}{gave_up}", error=detail, attempts=attempts, at=finished_at
    )


def _target(url, targets: dict) -> Target | UnsafeURL:
    if url not in targets:
        try:
            targets[url] = check_url(url)
        except UnsafeURL as exc:
            targets[url] = exc
    return targets[url]


def _send(delivery: Delivery, secrets: list[str], target, attempt: DeliveryAttempt) -> None:
    """POST the delivery; fills the attempt's response (or error) fields."""
    if isinstance(target, UnsafeURL):
        attempt.outcome = "refused"
        attempt.error = f"refused URL: {target}"[:500]
        return
    body = request_body(delivery)
    headers = {
        "Content-Type": "application/json",
        "User-Agent": USER_AGENT,
        signing.HEADER: signing.sign(body, secrets),
        "X-Service-Event": delivery.event.type,
        "X-Service-Delivery": str(delivery.event_uuid),
    }
    try:
        response = post(target, body=body, headers=headers, keep=RESPONSE_BODY_KEPT)
    except SendError as exc:
        attempt.error = str(exc)[:500]
        return
    attempt.status_code = response.status
    attempt.response_headers = response.headers
    attempt.response_body = response.body_start.decode("utf-8", errors="replace")


def webhook_ping(*, installation: Installation):
    """Send ``{"type": "ping", "eventId", "installationId"}`` to the installation's URL."""
    return events.fire(
        PING,
        organization=installation.organization,
        space=installation.space,
        site=installation.site,
        installation=installation,
    )


def deliveries_purge() -> int:
    """Delete finished webhook deliveries (and their attempts) past the retention period."""
    cutoff = timezone.now() - timedelta(days=settings.WEBHOOK_RETENTION_DAYS)
    deleted, _ = Delivery.objects.filter(
        consumer="webhook",
        status__in=[Delivery.Status.SUCCEEDED, Delivery.Status.FAILED, Delivery.Status.CANCELLED],
        completed_at__lt=cutoff,
    ).delete()
    return deleted
