from django.apps import AppConfig
from django.db.models.signals import post_save


class BenchConfig(AppConfig):
    name = "bench"

    def ready(self):
        from .models import ContentUpdate, stamp_commit

        # Connected before django-webhook's receiver (this app is listed first), so the stamp
        # is the moment the row was committed (autocommit), before the task is published.
        post_save.connect(stamp_commit, sender=ContentUpdate, dispatch_uid="bench-stamp")
