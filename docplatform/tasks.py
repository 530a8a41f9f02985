from celery import shared_task

from .events import outbox
from .services import worker_ping_answer


@shared_task(bind=True)
def answer_worker_ping(self, ping_id: int) -> None:
    worker_ping_answer(ping_id=ping_id, worker=self.request.hostname or "")


@shared_task(name=outbox.ENQUEUE_EVENT_TASK)
def enqueue_event_deliveries(event_id: str) -> int:
    """Queue a large fan-out's deliveries, off the request that fired the event."""
    return outbox.deliveries_enqueue_for_event(event_id)


@shared_task(name="docplatform.tasks.sweep_deliveries")
def sweep_deliveries() -> int:
    """The outbox's sweeper (periodic): re-queue what was never queued or whose worker died."""
    return outbox.deliveries_sweep()


@shared_task(name="docplatform.tasks.purge_space_visits")
def purge_space_visits() -> int:
    from .documents.services import space_visits_purge

    return space_visits_purge()
