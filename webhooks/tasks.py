from celery import shared_task

from .services import delivery


@shared_task(name="webhooks.tasks.deliver")
def deliver(delivery_id: int) -> None:
    delivery.webhook_deliver(delivery_id)


@shared_task(name="webhooks.tasks.deliver_due")
def deliver_due(rank: int = 0) -> int:
    """The drain: fresh deliveries in batches (docplatform.events.registry explains drains)."""
    return delivery.webhook_deliver_due(rank)


@shared_task(name="webhooks.tasks.purge_deliveries")
def purge_deliveries() -> int:
    return delivery.deliveries_purge()
