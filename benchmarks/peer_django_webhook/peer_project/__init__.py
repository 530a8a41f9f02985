"""A minimal Django project that sends webhooks with the django-webhook package (the peer)."""

from .celery import app as celery_app

__all__ = ["celery_app"]
