""" "Resend all failed since ...": a bounded bulk redelivery of one installation's failed
deliveries, sent again by a task that records its progress.

The deliveries are chosen when it is asked (the oldest first, at most
``WEBHOOK_BULK_REDELIVERY_LIMIT``), so the page can say "340 of 1000". Each goes through
the outbox's ``delivery_redeliver`` (same eventId, a new chain of attempts); one that is no
longer failed when its turn comes (redelivered meanwhile) is skipped.
"""

import logging
from datetime import datetime

from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import transaction
from django.db.models import F
from django.utils import timezone

from docplatform.access import Action
from docplatform.events.leases import delivery_redeliver
from docplatform.events.models import Delivery
from docplatform.events.publisher import BrokerUnavailable, publish
from integrations.models import Installation
from integrations.operators import acting
from integrations.policies import act_check

from ..models import BulkRedelivery
from ..selectors import failed_deliveries_since, latest_bulk_redelivery
from .checks import webhook_installation_check, webhook_receiving_check

logger = logging.getLogger(__name__)
REDELIVER_TASK = "webhooks.tasks.redeliver_failed"


def bulk_redelivery_request(*, user, installation: Installation, since: datetime) -> BulkRedelivery:
    """Ask to send again the installation's deliveries that failed since ``since`` (an admin
    of the installing organization); a task sends them after commit."""
    act_check(user, Action.REDELIVER, installation)
    webhook_installation_check(installation)
    webhook_receiving_check(installation)
    if since > timezone.now():
        raise ValidationError({"since": ["the time is in the future"]})
    with transaction.atomic():
        # One resend at a time per installation: two requests at once queue one.
        Installation.objects.select_for_update(no_key=True).filter(pk=installation.pk).first()
        running = latest_bulk_redelivery(installation)
        if running is not None and running.finished_at is None:
            raise ValidationError(
                {"since": [f"a resend is in progress ({running.done} of {running.total} done)"]}
            )
        limit = settings.WEBHOOK_BULK_REDELIVERY_LIMIT
        failed = failed_deliveries_since(installation, since).values_list("pk", flat=True)
        ids = list(failed[:limit])
        if not ids:
            raise ValidationError(
                {"since": [f"no delivery failed since {since:%d %b %Y %H:%M} UTC"]}
            )
        job = BulkRedelivery.objects.create(
            installation=installation, since=since, delivery_ids=ids, requested_by=acting(user)
        )
        transaction.on_commit(lambda: _queue(job.pk))
    return job


def _queue(job_id: int) -> None:
    """Queue the task (bounded in time, ``events.publisher``); a broker that is down stops
    the job at once (0 of N: the page says to ask again), never holding the request."""
    try:
        publish(REDELIVER_TASK, args=[job_id])
    except BrokerUnavailable:
        logger.warning("broker unavailable: bulk redelivery %s is stopped", job_id, exc_info=True)
        BulkRedelivery.objects.filter(pk=job_id).update(finished_at=timezone.now())


def bulk_redelivery_run(job_id: int) -> BulkRedelivery:
    """Send the job's deliveries again, from where it stopped (a task delivered again after
    its worker died resumes), counting each in ``done``. It ends finished whatever happens
    (an error is logged and raised): what it did not send is still failed, and a new
    "Resend all failed" takes it."""
    job = BulkRedelivery.objects.get(pk=job_id)
    try:
        for delivery_id in job.delivery_ids[job.done :]:
            sent = _resend(delivery_id)
            BulkRedelivery.objects.filter(pk=job.pk).update(
                done=F("done") + 1, skipped=F("skipped") + (0 if sent else 1)
            )
    except Exception:
        logger.exception("bulk redelivery %s stopped", job.pk)
        raise
    finally:
        BulkRedelivery.objects.filter(pk=job.pk).update(finished_at=timezone.now())
    job.refresh_from_db()
    return job


def _resend(delivery_id: int) -> bool:
    """Send one delivery again if it is still failed; whether it was sent."""
    delivery = Delivery.objects.filter(pk=delivery_id).first()
    if delivery is None or delivery.status != Delivery.Status.FAILED:
        return False  # purged, or redelivered meanwhile
    try:
        delivery_redeliver(delivery)
    except ValidationError:
        return False  # in progress again since it was chosen
    return True
