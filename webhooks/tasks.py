from celery import shared_task

from .services import delivery


@shared_task(name="webhooks.tasks.deliver")
def deliver(delivery_id: int) -> None:
    """A delivery's retry at its countdown (the outbox queues it with the delivery's id): a
    drain is asked for while that delivery still waits."""
    delivery.webhook_deliver(delivery_id)


@shared_task(name="webhooks.tasks.deliver_due")
def deliver_due(rank: int = 0) -> int:
    """The drain: fresh deliveries in batches (docplatform.events.registry explains drains)."""
    return delivery.webhook_deliver_due(rank)


@shared_task(name="webhooks.tasks.purge_deliveries")
def purge_deliveries() -> int:
    return delivery.deliveries_purge()


@shared_task(name="webhooks.tasks.disable_failing_endpoints")
def disable_failing_endpoints() -> int:
    from .services.endpoints import endpoints_disable_failing

    return len(endpoints_disable_failing())


@shared_task(name="webhooks.tasks.redeliver_failed", acks_late=True)
def redeliver_failed(job_id: int) -> int:
    """A "Resend all failed since ..." request (a BulkRedelivery's id); acknowledged once
    done, so a worker that dies meanwhile leaves it to another, which resumes."""
    from .services.redelivery import bulk_redelivery_run

    return bulk_redelivery_run(job_id).done


@shared_task(name="webhooks.tasks.replay", acks_late=True)
def replay(job_id: int) -> str | None:
    """One step of a replay (a Replay's id): queue its next batch once the previous one is
    settled, then the next step; acknowledged once done, so a step a dying worker held runs
    again."""
    from .services.replay import replay_step

    job = replay_step(job_id)
    return job.status if job else None
