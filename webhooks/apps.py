from django.apps import AppConfig
from django.db.models.signals import post_migrate


class WebhooksConfig(AppConfig):
    name = "webhooks"
    verbose_name = "Webhooks"

    def ready(self):
        from docplatform.api.schema import register_api_tag
        from docplatform.events import catalogue
        from docplatform.events.registry import Consumer, register_consumer
        from integrations.configuration import register_configuration_check
        from integrations.policies import register_acting_levels
        from integrations.services.audit import register_endpoint_property

        from .rules import PING_EVENT, WEBHOOK_CONSUMER, WEBHOOK_INTEGRATION
        from .services.drain import longest_hold
        from .services.endpoints import endpoint_wants
        from .services.publication import configuration_problems

        register_consumer(
            Consumer(
                name=WEBHOOK_CONSUMER,
                task_name="webhooks.tasks.deliver",
                drain_task_name="webhooks.tasks.deliver_due",
                # What the installation forwards, unless its endpoint is disabled.
                wants=endpoint_wants,
                longest_hold=longest_hold,
            ),
            integration=WEBHOOK_INTEGRATION,
        )
        catalogue.register(PING_EVENT)
        register_configuration_check(WEBHOOK_INTEGRATION, configuration_problems)
        # Webhooks are sent by space and site installations; the organization one only
        # holds them (its effective status says so while nothing is under it).
        register_acting_levels(
            WEBHOOK_INTEGRATION,
            {"space", "site"},
            "Webhooks are sent by space and site installations: install Webhooks in a space "
            "or a site to send their events",
        )
        # Where an installation sends its events: a change of it is audited on its own.
        register_endpoint_property(WEBHOOK_INTEGRATION, "url", "webhook.url_changed")
        post_migrate.connect(_publish_after_migrate, sender=self)
        register_api_tag(
            "Webhooks",
            "A webhook installation's test ping, signing secret and endpoint state.",
            r"installations/[^/]+/webhook/",
        )


def _publish_after_migrate(sender, **kwargs):
    """Every database the platform migrates has the webhook integration in its catalogue."""
    from .services.publication import webhook_integration_publish

    webhook_integration_publish()
