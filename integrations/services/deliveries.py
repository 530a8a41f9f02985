"""The outbox of deliveries: creating, queueing, claiming, completing and sweeping them."""

import logging
import uuid
from datetime import timedelta
from functools import partial

from celery import current_app
from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import transaction
from django.db.models import Q
from django.utils import timezone

from docplatform.events import SETUP_EVENTS

from ..consumers import consumer_for, consumer_named
from ..models import Delivery, Installation
from ..selectors import event_recipients, is_receiving, recipient_of

logger = logging.getLogger(__name__)


def deliveries_create(*, event, installation: Installation | None = None) -> list[Delivery]:
    """One delivery per recipient, in the caller's transaction; queued after commit."""
    if installation is not None:
        paused = installation.status == Installation.Status.PAUSED
        recipients = [] if paused else [recipient_of(installation)]
    else:
        recipients = event_recipients(event)
    deliveries = []
    for recipient in recipients:
        consumer = consumer_for(recipient.integration_name)
        if consumer.wants(recipient, event.type):
            deliveries.append(
                Delivery(
                    event=event,
                    installation_id=recipient.installation_id,
                    consumer=consumer.name,
                    event_uuid=uuid.uuid4(),
                )
            )
    Delivery.objects.bulk_create(deliveries)
    if deliveries:
        work = [(delivery.pk, delivery.consumer) for delivery in deliveries]
        transaction.on_commit(partial(_enqueue_after_commit, event.pk, work))
    return deliveries


def _enqueue_after_commit(event_id: str, work: list[tuple[int, str]]) -> None:
    """Few deliveries are queued at once; a large fan-out is handed to one task."""
    if len(work) <= settings.DELIVERY_INLINE_FANOUT:
        deliveries_enqueue(work)
        return
    from ..tasks import enqueue_event_deliveries

    try:
        enqueue_event_deliveries.delay(event_id)
    except Exception:
        logger.warning(
            "broker unavailable: event %s is left to the sweeper", event_id, exc_info=True
        )


def deliveries_enqueue(work: list[tuple[int, str]], *, countdown: float | None = None) -> int:
    """Send each (delivery id, consumer name) to its consumer's task and mark it queued.

    A broker failure is logged, not raised: the rows stay unqueued and the sweeper sends them
    once the broker is back. Returns how many were sent.
    """
    sent = []
    try:
        for delivery_id, consumer in work:
            current_app.send_task(
                consumer_named(consumer).task_name, args=[delivery_id], countdown=countdown
            )
            sent.append(delivery_id)
    except Exception:
        logger.warning(
            "broker unavailable: %d deliveries are left to the sweeper",
            len(work) - len(sent),
            exc_info=True,
        )
    if sent:
        Delivery.objects.filter(pk__in=sent).update(queued_at=timezone.now())
    return len(sent)


def deliveries_enqueue_for_event(event_id: str) -> int:
    work = list(
        Delivery.objects.filter(event_id=event_id, queued_at__isnull=True).values_list(
            "pk", "consumer"
        )
    )
    return deliveries_enqueue(work)


def deliveries_sweep() -> int:
    """Re-queue open deliveries that nobody is working on and that are overdue.

    Overdue: never queued (the broker was down at commit), or queued or due for a retry
    longer ago than the grace period without a worker holding them (a lost message, or a
    worker killed mid-flight whose lease ran out).
    """
    now = timezone.now()
    grace = now - timedelta(seconds=settings.DELIVERY_SWEEP_GRACE_SECONDS)
    stale = (
        Delivery.objects.filter(status__in=Delivery.OPEN_STATUSES)
        .filter(Q(lease_expires_at__isnull=True) | Q(lease_expires_at__lt=now))
        .filter(Q(queued_at__isnull=True, created_at__lt=grace) | Q(queued_at__lt=grace))
        .filter(Q(next_attempt_at__isnull=True) | Q(next_attempt_at__lt=grace))
    )
    work = list(stale.values_list("pk", "consumer")[: settings.DELIVERY_SWEEP_BATCH])
    if work:
        logger.info("sweeper re-queues %d deliveries", len(work))
    return deliveries_enqueue(work)


#: What a consumer reads of a claimed delivery, by default: its event and installation (with
#: the organization installation above it), and the integration's current version.
CLAIM_RELATED = ("event", "installation__integration__latest_version", "installation__parent")


def delivery_claim(delivery_id: int, *, related=CLAIM_RELATED) -> Delivery | None:
    """Take the lease on an open delivery, or None when it is closed or another worker holds it."""
    now = timezone.now()
    claimed = (
        Delivery.objects.filter(pk=delivery_id, status__in=Delivery.OPEN_STATUSES)
        .filter(Q(lease_expires_at__isnull=True) | Q(lease_expires_at__lt=now))
        .update(lease_expires_at=now + timedelta(seconds=settings.DELIVERY_LEASE_SECONDS))
    )
    if not claimed:
        return None
    deliveries = Delivery.objects.select_related(*related)
    if "installation__integration__latest_version" in related:
        # The script goes to the runtime host only when it asks (a deferred read then).
        deliveries = deliveries.defer("installation__integration__latest_version__script")
    return deliveries.get(pk=delivery_id)


def delivery_start(delivery_id: int, *, related=CLAIM_RELATED) -> Delivery | None:
    """Claim an open delivery for one attempt; None when there is nothing to do: it is closed,
    another worker holds it, or its installation was paused meanwhile (then it is cancelled).
    ``related`` narrows what is read with it (see CLAIM_RELATED)."""
    delivery = delivery_claim(delivery_id, related=related)
    if delivery is None:
        return None
    if not delivery_still_wanted(delivery):
        delivery_finish(delivery, status=Delivery.Status.CANCELLED, outcome="installation paused")
        return None
    return delivery


def delivery_still_wanted(delivery: Delivery) -> bool:
    """False when its installation was paused meanwhile (or, for a platform event, is no
    longer receiving). Setup events also reach a pending installation."""
    installation = delivery.installation
    if delivery.event.type in SETUP_EVENTS:
        return installation.status != Installation.Status.PAUSED
    return is_receiving(installation)


def delivery_finish(delivery: Delivery, *, status: str, outcome: str = "", error: str = "") -> None:
    delivery.status = status
    delivery.outcome = outcome[:200]
    delivery.last_error = error
    delivery.lease_expires_at = None
    delivery.next_attempt_at = None
    delivery.completed_at = timezone.now()
    delivery.save(
        update_fields=[
            "status",
            "attempts",
            "duration_ms",
            "outcome",
            "last_error",
            "lease_expires_at",
            "next_attempt_at",
            "completed_at",
        ]
    )


def delivery_cancel(delivery: Delivery, *, reason: str) -> None:
    delivery_finish(delivery, status=Delivery.Status.CANCELLED, outcome=reason)


def delivery_retry_later(delivery: Delivery, *, delay: float, error: str) -> None:
    """Release the lease and send the delivery to its consumer again after ``delay`` seconds."""
    delivery.status = Delivery.Status.RETRYING
    delivery.last_error = error
    delivery.lease_expires_at = None
    delivery.next_attempt_at = timezone.now() + timedelta(seconds=delay)
    delivery.save(
        update_fields=["status", "attempts", "last_error", "lease_expires_at", "next_attempt_at"]
    )
    deliveries_enqueue([(delivery.pk, delivery.consumer)], countdown=delay)


@transaction.atomic
def delivery_redeliver(delivery: Delivery) -> Delivery:
    """Send a finished delivery again: the same eventId, a new chain of attempts."""
    delivery = Delivery.objects.select_for_update().get(pk=delivery.pk)
    if delivery.status in Delivery.OPEN_STATUSES:
        raise ValidationError({"status": ["the delivery is still in progress"]})
    delivery.status = Delivery.Status.PENDING
    delivery.chain += 1
    delivery.attempts = 0
    delivery.outcome = ""
    delivery.last_error = ""
    delivery.completed_at = None
    delivery.next_attempt_at = None
    delivery.lease_expires_at = None
    delivery.queued_at = None
    delivery.save()
    work = [(delivery.pk, delivery.consumer)]
    transaction.on_commit(lambda: deliveries_enqueue(work))
    return delivery
