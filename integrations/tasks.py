"""Celery tasks of the integrations app: thin, they take ids and call services."""

from celery import shared_task

from .services import runtime_deliveries


@shared_task(name="integrations.tasks.run_delivery")
def run_delivery(delivery_id: int) -> None:
    """Take one delivery to the integration runtime."""
    runtime_deliveries.runtime_deliver(delivery_id)


@shared_task(name="integrations.tasks.purge_logs")
def purge_logs() -> int:
    """Delete the integration log lines past their retention period."""
    from .services.logs import integration_logs_purge

    return integration_logs_purge()
