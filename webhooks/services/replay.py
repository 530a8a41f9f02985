"""Replay: send an endpoint the events of a time range that it should have received and did
not get (it was paused or disabled), each once, or, when asked, every one of them.

A replay is a job (``Replay``). The events are chosen when it is asked (``selectors.
replay_events``: the oldest first, at most ``WEBHOOK_REPLAY_LIMIT``); a task queues them
``WEBHOOK_REPLAY_BATCH`` at a time, each batch once the previous one is settled, counting its
progress; cancelling it stops the batches and cancels what it queued that no worker holds.

**The eventIds.** A replayed event carries the eventId of its delivery to that endpoint: one
it had (cancelled, failed or, with ``include_delivered``, delivered) is sent again as it is
(``outbox.deliveries_send_again``: the same eventId, a new chain of attempts); one it never
had is made with ``rules.replay_event_uuid`` (uuid5 of the event and the installation), so
replaying a range again sends the same eventIds and receivers dedup by them.
"""

import logging
from datetime import datetime, timedelta

from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import transaction
from django.utils import timezone

from docplatform.access import Action
from docplatform.events.leases import Result, deliveries_settle
from docplatform.events.models import Delivery
from docplatform.events.outbox import deliveries_add, deliveries_send_again
from docplatform.events.publisher import BrokerUnavailable, publish
from integrations.models import Installation
from integrations.operators import acting
from integrations.policies import act_check

from ..models import Replay
from ..rules import WEBHOOK_CONSUMER, replay_event_uuid
from ..selectors import (
    active_replay,
    replay_deliveries_of,
    replay_events,
    replay_has_open_deliveries,
)
from .checks import webhook_installation_check, webhook_receiving_check

logger = logging.getLogger(__name__)
REPLAY_TASK = "webhooks.tasks.replay"
#: Seconds between looks at whether the previous batch is settled.
REPLAY_WAIT_SECONDS = 0.5


def replay_range_check(since: datetime, until: datetime, *, now: datetime) -> datetime:
    """Refuse a range that is empty or reaches past the retention period (events older than
    ``WEBHOOK_RETENTION_DAYS`` have no delivery rows left to tell what was sent, those older
    than ``EVENT_RETENTION_DAYS`` are purged); the end, at most now."""
    errors = {}
    kept = min(
        ("deliveries", settings.WEBHOOK_RETENTION_DAYS),
        ("events", settings.EVENT_RETENTION_DAYS),
        key=lambda what_days: what_days[1],
    )
    oldest = now - timedelta(days=kept[1])
    if since < oldest:
        errors["since"] = [
            f"before the retention period: {kept[0]} are kept {kept[1]}"
            f" days, so the earliest is {oldest:%Y-%m-%dT%H:%M:%SZ}"
        ]
    elif since >= now:
        errors["since"] = ["the time is in the future"]
    if since >= until:
        errors["until"] = ["must be after since"]
    if errors:
        raise ValidationError(errors)
    return min(until, now)


def replay_request(
    *,
    user,
    installation: Installation,
    since: datetime,
    until: datetime,
    include_delivered: bool = False,
) -> Replay:
    """Ask for a replay (an admin of the installing organization, or an operator from the
    command line, ``operators.OPERATOR``); a task queues it after commit."""
    act_check(user, Action.REPLAY, installation)
    webhook_installation_check(installation)
    until = replay_range_check(since, until, now=timezone.now())
    webhook_receiving_check(installation)
    with transaction.atomic():
        # One replay at a time per installation: two requests at once make one.
        Installation.objects.select_for_update(no_key=True).filter(pk=installation.pk).first()
        running = active_replay(installation)
        if running is not None:
            raise ValidationError(
                {
                    "status": [
                        f"replay {running.pk} is in progress ({running.queued} of "
                        f"{running.found} queued): wait for it or cancel it"
                    ]
                }
            )
        events = replay_events(
            installation, since=since, until=until, include_delivered=include_delivered
        )
        matched = events.count()
        chosen = list(events.values_list("pk", flat=True)[: settings.WEBHOOK_REPLAY_LIMIT])
        job = Replay.objects.create(
            installation=installation,
            since=since,
            until=until,
            include_delivered=include_delivered,
            matched=matched,
            event_ids=chosen,
            requested_by=acting(user),
        )
        if not chosen:
            job.status, job.finished_at = Replay.Status.DONE, timezone.now()
            job.save(update_fields=["status", "finished_at"])
        else:
            transaction.on_commit(lambda: _queue(job.pk))
    return job


def _queue(job_id: int, countdown: float | None = None) -> None:
    """Queue the job's next step; a broker that is down stops the job (asking again goes on
    where it stopped: what was delivered is not chosen again), never holding the caller."""
    try:
        publish(REPLAY_TASK, args=[job_id], countdown=countdown)
    except BrokerUnavailable:
        logger.warning("broker unavailable: replay %s is stopped", job_id, exc_info=True)
        Replay.objects.filter(pk=job_id, status__in=Replay.ACTIVE_STATUSES).update(
            status=Replay.Status.STOPPED, finished_at=timezone.now()
        )


def replay_step(job_id: int) -> Replay | None:
    """One step of a replay's task: while the batch it queued last is still being sent, look
    again shortly; otherwise queue the next batch (and the next step), or finish. A step
    runs with the job's row locked, so a cancel never races it; a step run twice finds the
    batch queued and waits."""
    with transaction.atomic():
        job = Replay.objects.select_for_update(no_key=True).filter(pk=job_id).first()
        if job is None or not job.is_active:
            return job
        if replay_has_open_deliveries(job):
            transaction.on_commit(lambda: _queue(job.pk, countdown=REPLAY_WAIT_SECONDS))
            return job
        batch = job.event_ids[job.queued : job.queued + settings.WEBHOOK_REPLAY_BATCH]
        sent = _replay_batch(job, batch)
        job.queued += len(batch)
        job.skipped += len(batch) - len(sent)
        job.delivery_ids = [*job.delivery_ids, *sent]
        job.status = Replay.Status.RUNNING
        if job.queued >= job.found:
            job.status, job.finished_at = Replay.Status.DONE, timezone.now()
        else:
            transaction.on_commit(lambda: _queue(job.pk))
        job.save(update_fields=["queued", "skipped", "delivery_ids", "status", "finished_at"])
    return job


def _replay_batch(job: Replay, event_ids: list[str]) -> list[int]:
    """Queue one batch: each event with its delivery to the endpoint (sent again) or a new
    one (its stable eventId); what was delivered meanwhile (unless ``include_delivered``)
    or is in progress is skipped. The deliveries queued."""
    installation = job.installation
    existing = replay_deliveries_of(installation, event_ids)
    again, new = [], []
    for event_id in event_ids:
        delivery = existing.get(event_id)
        if delivery is None:
            new.append((event_id, installation.pk, replay_event_uuid(event_id, installation.pk)))
        elif _sendable_again(delivery, include_delivered=job.include_delivered):
            again.append(delivery.pk)
    return [*deliveries_send_again(again), *deliveries_add(WEBHOOK_CONSUMER, new)]


def _sendable_again(delivery: Delivery, *, include_delivered: bool) -> bool:
    """Not in progress, and not delivered unless delivered ones are asked for too."""
    if delivery.status in Delivery.OPEN_STATUSES:
        return False
    return include_delivered or delivery.status != Delivery.Status.SUCCEEDED


def replay_cancel(*, user, installation: Installation, job: Replay) -> Replay:
    """Stop a replay (an admin, or an operator): no further batch is queued, and what it
    queued that is still waiting, held by no worker, is cancelled (what a worker is sending
    now ends as it ends)."""
    act_check(user, Action.REPLAY, installation)
    with transaction.atomic():
        job = Replay.objects.select_for_update(no_key=True).get(pk=job.pk)
        if not job.is_active:
            raise ValidationError({"status": [f"the replay is {job.get_status_display().lower()}"]})
        job.status, job.finished_at = Replay.Status.CANCELLED, timezone.now()
        job.save(update_fields=["status", "finished_at"])
        waiting = Delivery.objects.filter(
            pk__in=job.delivery_ids,
            status__in=Delivery.OPEN_STATUSES,
            lease_expires_at__isnull=True,
        )
        results = [(d, Result.cancelled(reason="replay cancelled")) for d in waiting]
        if results:
            deliveries_settle(results)
    return job
