from django.apps import AppConfig


class IntegrationsConfig(AppConfig):
    name = "integrations"

    def ready(self):
        from docplatform.crypto import register_derivable_key
        from docplatform.events.registry import register_consumer, register_router

        from .routing import INSTALLATION_ROUTER, RUNTIME_CONSUMER

        register_derivable_key("RUNTIME_SIGNING_KEY", "signs every envelope to the runtime host")
        register_router(INSTALLATION_ROUTER)
        register_consumer(RUNTIME_CONSUMER)
