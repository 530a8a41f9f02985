"""Sending webhook deliveries: the threads that POST them, and one attempt of one delivery
(signed, within its receiver's slot, recorded in an unsaved attempt row). No database here:
this runs in the sender threads."""

import functools
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

from django.conf import settings
from django.utils import timezone

from docplatform.events.models import Delivery
from docplatform.observability.metrics import attempt_observed
from docplatform.observability.tracing import Span, span

from ..models import DeliveryAttempt
from .outbound import SendError, Target, UnsafeURL, post
from .receivers import slots
from .signatures import signature_headers, signature_scheme

RESPONSE_BODY_KEPT = 1024
USER_AGENT = "docplatform-webhooks/1.0"
REFUSED = "refused URL: "


@functools.cache
def senders() -> ThreadPoolExecutor:
    """The threads that make a worker process's POSTs; they start as needed and are kept."""
    return ThreadPoolExecutor(
        max_workers=settings.WEBHOOK_SENDERS, thread_name_prefix="webhook-sender"
    )


@dataclass
class Job:
    """One claimed delivery ready to be attempted: its body, its signing secrets, and its URL
    checked (or refused). ``receiver`` (``host:port``) is None for a refused URL: nothing is
    sent."""

    delivery: Delivery
    body: bytes
    secrets: list[str]
    target: Target | UnsafeURL

    @property
    def receiver(self) -> str | None:
        if isinstance(self.target, UnsafeURL):
            return None
        return f"{self.target.host}:{self.target.port}"

    def run(self) -> DeliveryAttempt:
        """Attempt the delivery (in a sender thread: no database here), giving back its
        receiver's slot when it ends."""
        started = time.perf_counter()
        try:
            return _attempt(self)
        finally:
            if self.receiver:
                slots.give_back(self.receiver, time.perf_counter() - started)


def _attempt(job: Job) -> DeliveryAttempt:
    """POST the delivery and record how it went in a new (unsaved) attempt."""
    delivery = job.delivery
    url = delivery.installation.configuration.get("url")
    attempt = DeliveryAttempt(
        delivery=delivery,
        chain=delivery.chain,
        number=delivery.attempts + 1,
        started_at=timezone.now(),
        url=str(url or "")[:2048],
    )
    started = time.perf_counter()
    # A span of the event's trace (tracing on): from the request that fired it to this POST.
    with span(
        "webhook POST",
        parent=delivery.event.traceparent,
        kind="client",
        attributes={"docplatform.delivery": delivery.pk, "http.request.method": "POST"},
    ) as traced:
        _send(job, attempt, traced)
        traced.set("http.response.status_code", attempt.status_code)
        if attempt.error:
            traced.failed(attempt.error)
    seconds = time.perf_counter() - started
    attempt.duration_ms = int(seconds * 1000)
    if not isinstance(job.target, UnsafeURL):
        attempt_observed(delivery.consumer, seconds)
    return attempt


def _send(job: Job, attempt: DeliveryAttempt, traced: Span) -> None:
    """POST the delivery, signed in its endpoint's scheme (with the trace's ``traceparent``
    when its endpoint asks for it); fills the attempt's request headers and its response (or
    error)."""
    delivery, body, target = job.delivery, job.body, job.target
    if isinstance(target, UnsafeURL):
        attempt.error = f"{REFUSED}{target}"[:500]
        return
    event_id = str(delivery.event_uuid)
    headers = {
        "Content-Type": "application/json",
        "User-Agent": USER_AGENT,
        **signature_headers(
            signature_scheme(delivery.installation.configuration),
            event_id=event_id,
            body=body,
            secrets=job.secrets,
        ),
        "X-Service-Event": delivery.event.type,
        "X-Service-Delivery": event_id,
    }
    if delivery.installation.configuration.get("traceparent") is True:
        headers |= traced.headers()  # nothing while tracing is off
    attempt.request_headers = {"Host": target.host_header, **headers}
    try:
        response = post(target, body=body, headers=headers, keep=RESPONSE_BODY_KEPT)
    except SendError as exc:
        attempt.error = str(exc)[:500]
        return
    attempt.status_code = response.status
    attempt.response_headers = response.headers
    attempt.response_body = response.body_start.decode("utf-8", errors="replace")
