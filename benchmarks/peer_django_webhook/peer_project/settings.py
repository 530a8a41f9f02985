"""Settings of the peer project, from the environment the benchmark sets.

``PEER_DATABASE_URL`` (``postgres://user@host:port/name``) and ``CELERY_BROKER_URL`` (a Redis
database of its own). Database and Celery options mirror the platform's own settings
(``docplatform/settings/``), so the two differ only in the webhook library: connections kept
across requests and tasks (``CONN_MAX_AGE`` 300 s with health checks, ``CELERY_DB_REUSE_MAX``
1000), late acknowledgement, a prefetch of one, JSON, results ignored.
django-webhook itself is configured as its documentation says: its app installed and the
models whose saves fire webhooks listed in ``DJANGO_WEBHOOK["MODELS"]``; everything else is
its default (events stored, webhook lookups cached).
"""

import os
from urllib.parse import urlsplit

_database = urlsplit(os.environ.get("PEER_DATABASE_URL", "postgres://postgres@127.0.0.1:5432/peer"))

SECRET_KEY = "benchmark-only-not-a-secret"  # noqa: S105 - a throwaway local benchmark
DEBUG = False
ALLOWED_HOSTS = ["127.0.0.1"]
USE_TZ = True
TIME_ZONE = "UTC"
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

# "bench" comes first: its post_save receiver (the commit time stamp) runs before
# django-webhook's, which publishes the task.
INSTALLED_APPS = [
    "django.contrib.contenttypes",
    "django.contrib.auth",
    "bench",
    "django_webhook",
]

DATABASES = {
    "default": {
        "ENGINE": "django.db.backends.postgresql",
        "NAME": _database.path.lstrip("/"),
        "USER": _database.username or "postgres",
        "PASSWORD": _database.password or "",
        "HOST": _database.hostname or "127.0.0.1",
        "PORT": _database.port or 5432,
        "CONN_MAX_AGE": 300,
        "CONN_HEALTH_CHECKS": True,
    }
}

DJANGO_WEBHOOK = {"MODELS": ["bench.ContentUpdate"]}

CELERY_BROKER_URL = os.environ.get("CELERY_BROKER_URL", "redis://127.0.0.1:6379/13")
CELERY_BROKER_TRANSPORT_OPTIONS = {"visibility_timeout": 3600}
CELERY_DB_REUSE_MAX = 1000
CELERY_TASK_ACKS_LATE = True
CELERY_TASK_REJECT_ON_WORKER_LOST = True
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
CELERY_TASK_IGNORE_RESULT = True
CELERY_TASK_SERIALIZER = "json"
CELERY_ACCEPT_CONTENT = ["json"]
CELERY_TIMEZONE = TIME_ZONE

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "handlers": {"console": {"class": "logging.StreamHandler"}},
    "root": {"handlers": ["console"], "level": "WARNING"},
}
