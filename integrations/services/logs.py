"""Integration logs: one line per call of an integration's code, written by the runtime
gateway (``gateway.client.call_runtime``, the one door every call goes through), one line per
event an installation did not receive for lack of a scope, and the periodic purge.

A log write never fails the call it records: a database error is logged and the call's own
answer goes on.
"""

import logging
from dataclasses import dataclass
from datetime import datetime, timedelta

from django.conf import settings
from django.db import DatabaseError, models, transaction
from django.db.models.sql import InsertQuery
from django.utils import timezone

from docplatform.queries import PreparedSQL, stand_in, stand_in_time, stand_ins

from ..models import Installation, IntegrationLog, IntegrationVersion
from ..selectors import Undelivered

logger = logging.getLogger(__name__)

PURGE_BATCH = 5000
CUT_MARK = "\n[cut]"


def _storable(text: str | None, limit: int) -> str:
    """``text`` as any database stores it (no NUL characters, no lone surrogates), at most
    ``limit`` characters with a mark where it was cut."""
    if not text:
        return ""
    text = text.replace("\x00", "\ufffd").encode("utf-8", "replace").decode("utf-8")
    return text if len(text) <= limit else text[:limit] + CUT_MARK


@dataclass(frozen=True)
class CallRecord:
    """What the gateway knows of one call once it ended."""

    version: IntegrationVersion
    installation: Installation | None
    kind: str
    event: str
    request: str
    started_at: datetime
    outcome: str
    status: int | None
    duration_ms: int | None
    output: str = ""
    error: str = ""


def integration_log_record(record: CallRecord) -> IntegrationLog | None:
    """Store one call's log line; None when the database refused it (logged, not raised)."""
    line = IntegrationLog(
        time=record.started_at,
        kind=record.kind,
        integration_id=record.version.integration_id,
        installation=record.installation,
        version=record.version.number,
        event=_storable(record.event, 64)[:64],
        request=_storable(record.request, 480)[:500],
        outcome=record.outcome,
        status=record.status if record.status is not None and 0 < record.status < 1000 else None,
        duration_ms=max(0, record.duration_ms) if record.duration_ms is not None else None,
        output=_storable(record.output, IntegrationLog.OUTPUT_LIMIT + 200),
        error=_storable(record.error, IntegrationLog.ERROR_LIMIT),
    )
    connection = transaction.get_connection()
    own_transaction = not connection.in_atomic_block
    try:
        with transaction.atomic():  # a savepoint in a caller's transaction: its own otherwise
            if own_transaction and connection.vendor == "postgresql":
                _commit_without_waiting(connection)
            _insert(line)
    except DatabaseError:
        logger.exception("integration %s: the call's log line was not stored", line.integration_id)
        return None
    return line


def _commit_without_waiting(connection) -> None:
    """This transaction's commit does not wait for PostgreSQL to flush it to disk (2 ms of a
    call here): a log line is a diagnostic, and a database crash loses at most the lines of
    its last moments, never corrupts. Only in a transaction of the log line's own, never in
    a caller's, whose writes must be durable."""
    with connection.cursor() as cursor:
        cursor.execute("SET LOCAL synchronous_commit TO OFF")


_NUMBER_TYPES = {"PositiveIntegerField", "PositiveSmallIntegerField", "BigAutoField"}
_LOG_FIELDS = [field for field in IntegrationLog._meta.concrete_fields if not field.primary_key]


def _stand_in_of(field):
    if isinstance(field, models.DateTimeField):
        return stand_in_time(_LOG_FIELDS.index(field) + 1)
    if field.get_internal_type() in _NUMBER_TYPES:
        return stand_ins(f"log-{field.attname}", 1, numbers=True)[0]
    return stand_in(f"log-{field.attname}")


#: Each column's attribute and the stand-in its value replaces in the compiled statement.
_COLUMNS = [(field.attname, _stand_in_of(field)) for field in _LOG_FIELDS]
_insert_statements: dict[str, PreparedSQL] = {}


def _insert(line: IntegrationLog) -> None:
    """``line.save()`` without building and compiling the INSERT at each call (a third of
    the CPU a runtime call costs the web process): compiled once per database with a
    stand-in for each column, as ``docplatform.queries`` does for reads."""
    alias = IntegrationLog.objects.db
    if alias not in _insert_statements:
        _insert_statements[alias] = _insert_statement(alias)
    rows = _insert_statements[alias].execute(
        {stand: getattr(line, attname) for attname, stand in _COLUMNS}
    )
    line.pk = rows[0][0]
    line._state.adding, line._state.db = False, alias


def _insert_statement(alias: str) -> PreparedSQL:
    template = IntegrationLog(**dict(_COLUMNS))
    query = InsertQuery(IntegrationLog)
    query.insert_values(_LOG_FIELDS, [template])
    compiler = query.get_compiler(using=alias)
    compiler.returning_fields = [IntegrationLog._meta.pk]
    [(sql, params)] = compiler.as_sql()
    return PreparedSQL(sql, params, using=alias)


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
    deleted = 0
    while True:
        batch = list(
            IntegrationLog.objects.filter(time__lt=cutoff).values_list("pk", flat=True)[
                :PURGE_BATCH
            ]
        )
        if not batch:
            return deleted
        deleted += IntegrationLog.objects.filter(pk__in=batch).delete()[0]
