"""Celery tasks of the integrations app: thin, they take ids and call services."""

from celery import shared_task

from .models import Delivery
from .services import deliveries as delivery_services


@shared_task(name="integrations.tasks.enqueue_event_deliveries")
def enqueue_event_deliveries(event_id: str) -> int:
    return delivery_services.deliveries_enqueue_for_event(event_id)


@shared_task(name="integrations.tasks.sweep_deliveries")
def sweep_deliveries() -> int:
    return delivery_services.deliveries_sweep()


@shared_task(name="integrations.tasks.run_delivery")
def run_delivery(delivery_id: int) -> None:
    """Take one delivery to the integration runtime."""
    delivery = delivery_services.delivery_claim(delivery_id)
    if delivery is None:
        return
    if not delivery_services.delivery_still_wanted(delivery):
        delivery_services.delivery_cancel(delivery, reason="the installation is paused")
        return
    version = delivery.installation.integration.latest_version
    if version is None or not version.script:
        delivery_services.delivery_finish(
            delivery,
            status=Delivery.Status.SUCCEEDED,
            outcome="the integration has no script: nothing to run",
        )
        return
    delivery_services.delivery_finish(
        delivery,
        status=Delivery.Status.FAILED,
        error="the integration runtime is not available on this platform yet",
    )
