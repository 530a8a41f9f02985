"""Integration logs: one line per event an installation did not receive for lack of a scope,
and the periodic purge. The line of each call of an integration's code is written by the
runtime gateway (``gateway.client.call_runtime``, the one door every call goes through) with
``gateway.log_store.integration_log_record``, below the services.

A log write never fails what it records: a database error is logged and the event goes on.
"""

import logging
from datetime import datetime, timedelta

from django.conf import settings
from django.db import DatabaseError, transaction
from django.utils import timezone

from docplatform.events.retention import rows_purge

from ..models import IntegrationLog
from ..routing_selectors import Undelivered

logger = logging.getLogger(__name__)

PURGE_BATCH = 5000


def integration_logs_not_delivered(event, undelivered: list[Undelivered]) -> None:
    """One line per installation the event did not reach for lack of a scope, written in one
    statement once the event is committed (an event rolled back reached nobody)."""
    if not undelivered:
        return
    lines = [
        IntegrationLog(
            time=event.created_at or timezone.now(),
            kind=IntegrationLog.Kind.NOT_DELIVERED,
            integration_id=missing.integration_id,
            installation_id=missing.installation_id,
            version=missing.version,
            event=event.type,
            outcome=IntegrationLog.Outcome.NOT_DELIVERED,
            error=missing.message,
        )
        for missing in undelivered
    ]

    def write():
        try:
            IntegrationLog.objects.bulk_create(lines)
        except DatabaseError:
            logger.exception("event %s: its not-delivered log lines were not stored", event.pk)

    transaction.on_commit(write)


def integration_logs_purge(now: datetime | None = None) -> int:
    """Delete the log lines older than ``INTEGRATION_LOG_RETENTION_DAYS``, a batch at a time
    (no long lock on a busy table); returns how many."""
    cutoff = (now or timezone.now()) - timedelta(days=settings.INTEGRATION_LOG_RETENTION_DAYS)
    return rows_purge(IntegrationLog.objects.filter(time__lt=cutoff), batch=PURGE_BATCH)
