from django.apps import AppConfig
from django.db.models.signals import post_migrate


class WebhooksConfig(AppConfig):
    name = "webhooks"
    verbose_name = "Webhooks"

    def ready(self):
        from integrations.configuration import register_configuration_check
        from integrations.consumers import Consumer, register_consumer

        from .services import (
            WEBHOOK_CONSUMER,
            WEBHOOK_INTEGRATION,
            configuration_problems,
            wants_event,
        )

        register_consumer(
            WEBHOOK_INTEGRATION,
            Consumer(
                name=WEBHOOK_CONSUMER,
                task_name="webhooks.tasks.deliver",
                drain_task_name="webhooks.tasks.deliver_due",
                wants=wants_event,
            ),
        )
        register_configuration_check(WEBHOOK_INTEGRATION, configuration_problems)
        post_migrate.connect(_publish_after_migrate, sender=self)


def _publish_after_migrate(sender, **kwargs):
    """Every database the platform migrates has the webhook integration in its catalogue."""
    from .services import webhook_integration_publish

    webhook_integration_publish()
