import logging

from celery import shared_task
from django.db import DatabaseError, connection

from .events import outbox
from .services import WORKER_PING_TASK, worker_ping_answer

logger = logging.getLogger(__name__)


@shared_task(bind=True, name=WORKER_PING_TASK)
def answer_worker_ping(self, ping_id: int) -> None:
    """Answer ``manage.py worker_ping`` (``services.worker_ping_request``) as this worker."""
    worker_ping_answer(ping_id=ping_id, worker=self.request.hostname or "")


@shared_task(name=outbox.ENQUEUE_EVENT_TASK)
def enqueue_event_deliveries(event_id: str) -> int:
    """Queue a large fan-out's deliveries, off the request that fired the event."""
    return outbox.deliveries_enqueue_for_event(event_id)


@shared_task(name="docplatform.tasks.sweep_deliveries")
def sweep_deliveries() -> int:
    """The outbox's sweeper (periodic): re-queue what was never queued or whose worker died."""
    return outbox.deliveries_sweep()


@shared_task(name="docplatform.tasks.purge_events")
def purge_events() -> int:
    """Delete the events past ``EVENT_RETENTION_DAYS`` whose deliveries are settled
    (periodic), a batch at a time; returns how many."""
    from .events.retention import events_purge

    return events_purge()


@shared_task(name="docplatform.tasks.purge_space_visits")
def purge_space_visits() -> int:
    from .documents.visits import space_visits_purge

    return space_visits_purge()


@shared_task(name="docplatform.tasks.purge_site_visits")
def purge_site_visits() -> int:
    from .sites.services import site_visits_purge

    return site_visits_purge()


@shared_task(name="docplatform.tasks.run_git_sync")
def run_git_sync(sync_id: int) -> None:
    """Run a Git sync; while another sync of its space runs, or when the database failed it
    before it started (a broken connection, a failover), try again a moment later."""
    from .gitsync.runs import git_sync_run
    from .gitsync.services import WAIT_SECONDS, git_sync_queue

    try:
        sync = git_sync_run(sync_id)
    except DatabaseError:
        logger.warning("Git sync %s met a database error: asked again", sync_id, exc_info=True)
        connection.close()  # the next query opens a new one
        git_sync_queue(sync_id, countdown=WAIT_SECONDS)
        return
    if sync is not None and sync.status == sync.Status.QUEUED:
        git_sync_queue(sync.pk, countdown=WAIT_SECONDS)


@shared_task(name="docplatform.tasks.fail_stale_git_syncs")
def fail_stale_git_syncs() -> int:
    """Fail the Git syncs whose worker was lost (periodic), so their spaces may sync again."""
    from .gitsync.runs import git_syncs_fail_stale

    return git_syncs_fail_stale()


@shared_task(name="docplatform.tasks.rematch_conversations")
def rematch_conversations(organization_id: str) -> int:
    """Mark again which conversations the organization's documentation answers, after it
    changed (``conversations.services.conversations_rematch_on_change`` queues it)."""
    from .conversations.services import conversations_rematch

    return conversations_rematch(organization_id)
