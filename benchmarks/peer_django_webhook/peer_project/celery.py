"""The peer's Celery application, configured from its Django settings (``CELERY_*``)."""

import os

from celery import Celery

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "peer_project.settings")

app = Celery("peer_project")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()
