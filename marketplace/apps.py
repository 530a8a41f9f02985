from django.apps import AppConfig


class MarketplaceConfig(AppConfig):
    """The pages where organization members browse, install and configure integrations."""

    name = "marketplace"

    def ready(self):
        from django.contrib import admin
        from django.urls import reverse_lazy

        # The admin's "View site" link leads operators to the members' pages.
        admin.site.site_url = reverse_lazy("marketplace:home")
