from django.apps import AppConfig


class IntegrationsConfig(AppConfig):
    name = "integrations"

    def ready(self):
        from docplatform.api.schema import register_api_tag
        from docplatform.change_feed import feed
        from docplatform.crypto import register_derivable_key
        from docplatform.events.registry import (
            register_claims_reader,
            register_consumer,
            register_router,
        )
        from docplatform.observability.metrics import collector_register
        from docplatform.reading.blocks import register_provider
        from docplatform.sites.visitor_auth import register_visitor_auth

        from .gateway.metrics import RuntimeWorkersCollector
        from .kept_installations import kept_installations
        from .page_blocks import IntegrationBlocks
        from .routing import INSTALLATION_ROUTER, RUNTIME_CONSUMER
        from .services.visitor_auth import (
            IntegrationVisitorAuth,
            installation_reads_visitor_claims,
        )

        register_derivable_key("RUNTIME_SIGNING_KEY", "signs every envelope to the runtime host")
        register_router(INSTALLATION_ROUTER)
        register_consumer(RUNTIME_CONSUMER)
        register_visitor_auth(IntegrationVisitorAuth())  # who signs a site's visitors in
        register_claims_reader(installation_reads_visitor_claims)
        register_provider(IntegrationBlocks())  # integration blocks in documentation pages
        collector_register(RuntimeWorkersCollector())  # the runtime hosts' workers, on /metrics
        feed.subscribe(kept_installations.changed)  # what public endpoints' calls keep read
        _register_api_tags(register_api_tag)


def _register_api_tags(register) -> None:
    """This app's groups of operations in the API's documentation."""
    register(
        "Integrations",
        "The catalogue, publishing, versions and install links of integrations.",
        r"integrations/",
    )
    register(
        "Installations",
        "Installing into an organization, a space or a site; configuration, space selection, "
        "pause and resume, scopes, OAuth connections and components.",
        r"orgs/[^/]+/installations/",
        r"spaces/[^/]+/installations/",
        r"sites/[^/]+/installations/",
        r"installations/",
    )
    register(
        "Installation token",
        "For integration code with its installation token: its own installation, OAuth.",
        r"installation/",
    )
    register(
        "Integration token",
        "For integration code with its integration token: the installations it acts on, each "
        "within that installation's granted scopes.",
        r"integration/",
    )
    register(
        "Deliveries",
        "Each event's delivery to an installation, and redelivery.",
        r"deliveries/",
        r"installations/[^/]+/deliveries/",
    )
    register(
        "Logs",
        "Each call of an integration's code: what it printed and how it ended.",
        r"integrations/[^/]+/logs/",
        r"installations/[^/]+/logs/",
    )
