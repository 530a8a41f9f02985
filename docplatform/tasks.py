from celery import shared_task

from .services import worker_ping_answer


@shared_task(bind=True)
def answer_worker_ping(self, ping_id: int) -> None:
    worker_ping_answer(ping_id=ping_id, worker=self.request.hostname or "")
