"""The Celery application: configured from Django settings (``CELERY_*``)."""

import os

from celery import Celery
from celery.signals import task_prerun

from .startup import settings_or_exit

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "docplatform.settings")

app = Celery("docplatform")


@app.on_configure.connect
def _settings_or_exit(**kwargs) -> None:
    """``celery -A docplatform ...`` reads the settings here first: a wrong one stops it with
    one line (``error: ...``, exit code 2), not a traceback."""
    settings_or_exit()


app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()


@task_prerun.connect
def _replace_stale_connections(**kwargs) -> None:
    """What Django does at each request, at each task: a connection that broke or outlived
    CONN_MAX_AGE is closed (and opened anew when used). See CELERY_DB_REUSE_MAX."""
    from django.db import close_old_connections

    close_old_connections()
