"""Celery tasks of the integrations app: thin, they take ids and call services."""

from celery import shared_task

from .services import deliveries as delivery_services
from .services import runtime_deliveries


@shared_task(name="integrations.tasks.enqueue_event_deliveries")
def enqueue_event_deliveries(event_id: str) -> int:
    return delivery_services.deliveries_enqueue_for_event(event_id)


@shared_task(name="integrations.tasks.sweep_deliveries")
def sweep_deliveries() -> int:
    return delivery_services.deliveries_sweep()


@shared_task(name="integrations.tasks.run_delivery")
def run_delivery(delivery_id: int) -> None:
    """Take one delivery to the integration runtime."""
    runtime_deliveries.runtime_deliver(delivery_id)
