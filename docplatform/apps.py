from django.apps import AppConfig


class DocplatformConfig(AppConfig):
    name = "docplatform"
    verbose_name = "Documentation platform"
