"""The model whose saves fire the peer's webhooks: the same fields as our event's payload."""

import time

from django.db import models

#: event_id -> the wall-clock time its row was committed, filled while the driver fires.
COMMITTED: dict[str, float] = {}


class ContentUpdate(models.Model):
    """One content update; django-webhook sends it as ``{"object": {...}, "topic", ...}``."""

    event_id = models.UUIDField(unique=True)
    space_id = models.CharField(max_length=32)
    revision_id = models.CharField(max_length=32)

    def __str__(self):
        return str(self.event_id)


def stamp_commit(sender, instance, created, **kwargs):
    if created:
        COMMITTED[str(instance.event_id)] = time.time()
