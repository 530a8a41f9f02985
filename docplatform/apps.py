from django.apps import AppConfig


class DocplatformConfig(AppConfig):
    name = "docplatform"
    verbose_name = "Documentation platform"

    def ready(self):
        from django.urls import register_converter

        from .api_inputs import (
            DeliveryIdConverter,
            IntegrationNameConverter,
            ObjectIdConverter,
            OrganizationRefConverter,
        )
        from .events import checks  # noqa: F401 - registers the outbox's system checks

        # The API's path converters, shared with the plug-in apps' routes.
        register_converter(ObjectIdConverter, "id")
        register_converter(OrganizationRefConverter, "orgref")
        register_converter(IntegrationNameConverter, "name")
        register_converter(DeliveryIdConverter, "deliveryid")
        register_converter(DeliveryIdConverter, "tokenid")  # a row id: at most 18 digits
