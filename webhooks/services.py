"""The webhook integration: its publication, settings checks, signing secrets and delivery."""

import json
import logging
import random
import time
from datetime import timedelta
from pathlib import Path

import requests
from django.conf import settings
from django.contrib.auth import get_user_model
from django.db import transaction
from django.utils import timezone

from docplatform import events
from docplatform.models import Membership, Organization
from integrations.models import Delivery, Installation
from integrations.runtime import signing
from integrations.services import integration_publish
from integrations.services.deliveries import (
    delivery_finish,
    delivery_retry_later,
    delivery_start,
)

from .models import DeliveryAttempt, SigningSecret, new_signing_secret
from .outbound import UnsafeURL, check_url, post

logger = logging.getLogger(__name__)

WEBHOOK_INTEGRATION = "webhook"
MANIFEST_FOLDER = Path(__file__).resolve().parent / "integration"
PLATFORM_ORGANIZATION = "platform"
PLATFORM_PUBLISHER = "platform-publisher"
#: The events a webhook installation may forward, by where it is installed.
SELECTABLE_EVENTS = {
    "space": ("space_content_updated",),
    "site": ("site_view", "page_feedback"),
}
PING = "ping"
ROTATION_OVERLAP = timedelta(hours=24)
MAX_RETRIES = 3
RESPONSE_BODY_KEPT = 1024
USER_AGENT = "docplatform-webhooks/1.0"


# --- publication and settings -----------------------------------------------------------------


def webhook_integration_publish() -> None:
    """Publish the built-in webhook integration, owned by the internal platform organization.

    Idempotent: publishing unchanged content creates no new version.
    """
    organization, _ = Organization.objects.get_or_create(
        subdomain=PLATFORM_ORGANIZATION, defaults={"title": "Platform", "internal": True}
    )
    publisher, created = get_user_model().objects.get_or_create(username=PLATFORM_PUBLISHER)
    if created:
        publisher.set_unusable_password()
        publisher.save(update_fields=["password"])
    Membership.objects.get_or_create(
        organization=organization, user=publisher, defaults={"role": Membership.Role.ADMIN}
    )
    integration_publish(path=MANIFEST_FOLDER, publisher=publisher, env={})


def wants_event(recipient, event_type: str) -> bool:
    """A webhook installation forwards the events its configuration switches on (and pings)."""
    return event_type == PING or recipient.configuration.get(event_type) is True


def configuration_problems(level: str, configuration: dict) -> list[dict]:
    """The webhook settings' rules beyond their types: a callable URL, at least one event."""
    selectable = SELECTABLE_EVENTS.get(level)
    if selectable is None:
        return []  # the organization installation has nothing to configure
    problems = []
    url = configuration.get("url")
    if url is not None:
        try:
            check_url(url)
        except UnsafeURL as exc:
            problems.append({"path": "configuration.url", "message": str(exc)})
    if not any(configuration.get(event) is True for event in selectable):
        problems.append(
            {
                "path": "configuration",
                "message": f"select at least one event ({', '.join(selectable)})",
            }
        )
    return problems


# --- signing secrets --------------------------------------------------------------------------


def signing_secrets(installation: Installation) -> list[str]:
    """The secrets that sign now: the current one first, then any still in its overlap."""
    now = timezone.now()
    rows = list(
        SigningSecret.objects.filter(installation=installation)
        .exclude(expires_at__lte=now)
        .order_by("expires_at", "-created_at")
    )
    current = [row.secret for row in rows if row.expires_at is None]
    if not current:
        return [signing_secret_current(installation)] + [row.secret for row in rows]
    return current + [row.secret for row in rows if row.expires_at is not None]


@transaction.atomic
def signing_secret_current(installation: Installation) -> str:
    """The installation's current signing secret, made on first use."""
    Installation.objects.select_for_update(of=("self",)).filter(pk=installation.pk).first()
    row = SigningSecret.objects.filter(installation=installation, expires_at__isnull=True).first()
    if row is None:
        row = SigningSecret.objects.create(installation=installation, secret=new_signing_secret())
    return row.secret


@transaction.atomic
def signing_secret_rotate(installation: Installation) -> str:
    """Make a new current secret; the old one keeps signing for 24 hours."""
    Installation.objects.select_for_update(of=("self",)).filter(pk=installation.pk).first()
    now = timezone.now()
    SigningSecret.objects.filter(installation=installation, expires_at__isnull=True).update(
        expires_at=now + ROTATION_OVERLAP
    )
    return SigningSecret.objects.create(
        installation=installation, secret=new_signing_secret(), created_at=now
    ).secret


# --- delivery ---------------------------------------------------------------------------------


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
    """Make one attempt of a webhook delivery, then finish it or schedule the retry."""
    # A webhook reads the event and the installation, never the integration's code.
    delivery = delivery_start(delivery_id, related=("event", "installation__parent"))
    if delivery is None:
        return
    installation = delivery.installation
    delivery.attempts += 1
    attempt = DeliveryAttempt(
        delivery=delivery,
        chain=delivery.chain,
        number=delivery.attempts,
        started_at=timezone.now(),
        url=str(installation.configuration.get("url", ""))[:2048],
    )
    started = time.perf_counter()
    status_code, error = _send(delivery, installation, attempt)
    attempt.duration_ms = int((time.perf_counter() - started) * 1000)
    outcome = "failed" if attempt.outcome == "refused" else classify_response(status_code)
    attempt.outcome = attempt.outcome or outcome
    detail = error or (f"HTTP {status_code}" if status_code else "")

    if outcome == "retry" and delivery.attempts <= MAX_RETRIES:
        attempt.next_delay = retry_delay(delivery.attempts)
        attempt.save()
        delivery_retry_later(delivery, delay=attempt.next_delay, error=detail)
        return
    attempt.save()
    if outcome == "succeeded":
        delivery_finish(delivery, status=Delivery.Status.SUCCEEDED, outcome=f"HTTP {status_code}")
    else:
        gave_up = " after the last retry" if outcome == "retry" else ""
        delivery_finish(
            delivery, status=Delivery.Status.FAILED, outcome=f"{detail}{gave_up}", error=detail
        )


def _send(delivery: Delivery, installation: Installation, attempt: DeliveryAttempt):
    """POST the delivery; fills the attempt's response fields. Returns (status, error)."""
    try:
        target = check_url(installation.configuration.get("url"))
    except UnsafeURL as exc:
        attempt.outcome = "refused"
        attempt.error = f"refused URL: {exc}"[:500]
        return None, attempt.error
    body = request_body(delivery)
    headers = {
        "Content-Type": "application/json",
        "User-Agent": USER_AGENT,
        signing.HEADER: signing.sign(body, signing_secrets(installation)),
        "X-Service-Event": delivery.event.type,
        "X-Service-Delivery": str(delivery.event_uuid),
    }
    timeout = (settings.WEBHOOK_CONNECT_TIMEOUT, settings.WEBHOOK_RESPONSE_TIMEOUT)
    try:
        response = post(target, body=body, headers=headers, timeout=timeout)
    except requests.Timeout as exc:
        attempt.error = f"timeout: {exc.__class__.__name__}"
        return None, attempt.error
    except requests.RequestException as exc:
        attempt.error = f"network error: {_short(exc)}"[:500]
        return None, attempt.error
    try:
        kept = response.raw.read(RESPONSE_BODY_KEPT, decode_content=True) or b""
    except Exception:  # a receiver that breaks off its body: the status still counts
        kept = b""
    finally:
        response.close()
    attempt.status_code = response.status_code
    attempt.response_headers = dict(response.headers)
    attempt.response_body = kept.decode("utf-8", errors="replace")
    return response.status_code, ""


def _short(exc: Exception) -> str:
    reason = exc.args[0] if exc.args else exc
    return str(getattr(reason, "reason", reason))


def webhook_ping(*, installation: Installation):
    """Send ``{"type": "ping", "eventId", "installationId"}`` to the installation's URL."""
    return events.fire(
        PING,
        organization=installation.organization,
        space=installation.space,
        site=installation.site,
        installation=installation,
        payload={},
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
