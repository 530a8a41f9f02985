from django.apps import AppConfig


class IntegrationsConfig(AppConfig):
    name = "integrations"

    def ready(self):
        from docplatform.crypto import register_derivable_key

        register_derivable_key("RUNTIME_SIGNING_KEY", "signs every envelope to the runtime host")
