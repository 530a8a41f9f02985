""" "Resend all failed since ...": a bounded bulk redelivery of one installation's failed
deliveries, sent again by a task that records its progress.

The deliveries are chosen when it is asked (the oldest first, at most
``WEBHOOK_BULK_REDELIVERY_LIMIT``), so the page can say "340 of 1000". Each goes through
the outbox's ``delivery_redeliver`` (same eventId, a new chain of attempts); one that is no
longer failed when its turn comes (redelivered meanwhile) is skipped.
"""

from datetime import datetime

from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import transaction
from django.db.models import F
from django.utils import timezone

from docplatform.events.models import Delivery
from docplatform.events.outbox import delivery_redeliver
from integrations.models import Installation

from ..models import BulkRedelivery
from ..selectors import failed_deliveries_since, latest_bulk_redelivery
from ..services_admin import (
    webhook_admin_check,
    webhook_installation_check,
    webhook_receiving_check,
)


def bulk_redelivery_request(*, user, installation: Installation, since: datetime) -> BulkRedelivery:
    """Ask to send again the installation's deliveries that failed since ``since`` (an admin
    of the installing organization); a task sends them after commit."""
    webhook_admin_check(user, installation, "resend deliveries")
    webhook_installation_check(installation)
    webhook_receiving_check(installation)
    if since > timezone.now():
        raise ValidationError({"since": ["the time is in the future"]})
    running = latest_bulk_redelivery(installation)
    if running is not None and running.finished_at is None:
        raise ValidationError(
            {"since": [f"a resend is in progress ({running.done} of {running.total} done)"]}
        )
    limit = settings.WEBHOOK_BULK_REDELIVERY_LIMIT
    ids = list(failed_deliveries_since(installation, since).values_list("pk", flat=True)[:limit])
    if not ids:
        raise ValidationError({"since": [f"no delivery failed since {since:%d %b %Y %H:%M} UTC"]})
    with transaction.atomic():
        job = BulkRedelivery.objects.create(
            installation=installation, since=since, delivery_ids=ids, requested_by=user
        )
        transaction.on_commit(lambda: _queue(job.pk))
    return job


def _queue(job_id: int) -> None:
    from ..tasks import redeliver_failed

    redeliver_failed.delay(job_id)


def bulk_redelivery_run(job_id: int) -> BulkRedelivery:
    """Send the job's deliveries again, from where it stopped (a task run again after a
    crash resumes), counting each in ``done``."""
    job = BulkRedelivery.objects.get(pk=job_id)
    for delivery_id in job.delivery_ids[job.done :]:
        delivery = Delivery.objects.filter(pk=delivery_id).first()
        sent = False
        if delivery is not None and delivery.status == Delivery.Status.FAILED:
            try:
                delivery_redeliver(delivery)
                sent = True
            except ValidationError:
                pass  # in progress again since it was chosen
        BulkRedelivery.objects.filter(pk=job.pk).update(
            done=F("done") + 1, skipped=F("skipped") + (0 if sent else 1)
        )
    BulkRedelivery.objects.filter(pk=job.pk).update(finished_at=timezone.now())
    job.refresh_from_db()
    return job
