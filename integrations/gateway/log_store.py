"""The integration log's line for one call of integration code, stored: ``CallRecord`` (what
the gateway knows of the call once it ended, ``call_log.CallLog``) and
``integration_log_record``, its one INSERT, compiled once per database.

A log write never fails the call it records: a database error is logged and the call's own
answer goes on. The other writes of the log (the lines of events not delivered, the purge)
are the services' (``services.logs``).
"""

import logging
from dataclasses import dataclass
from datetime import datetime

from django.db import DatabaseError, models, transaction
from django.db.models.sql import InsertQuery

from docplatform.queries import PreparedSQL, stand_in, stand_in_time, stand_ins

from ..models import Installation, IntegrationLog, IntegrationVersion

#: The logger of ``services.logs``, where these writes were until they moved below the
#: services (the gateway imports no service): one name for the log's writes.
logger = logging.getLogger("integrations.services.logs")

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
    test: bool = False  # the event was a sample one (``"test": true``)


def line_values(record: CallRecord) -> dict:
    """The log line of ``record``: each column's value by attribute name, each text as the
    database stores it."""
    return {
        "time": record.started_at,
        "kind": record.kind,
        "integration_id": record.version.integration_id,
        "installation_id": record.installation.pk if record.installation is not None else None,
        "version": record.version.number,
        "event": _storable(record.event, 64)[:64],
        "test": record.test,
        "request": _storable(record.request, 480)[:500],
        "outcome": record.outcome,
        "status": record.status if record.status is not None and 0 < record.status < 1000 else None,
        "duration_ms": max(0, record.duration_ms) if record.duration_ms is not None else None,
        "output": _storable(record.output, IntegrationLog.OUTPUT_LIMIT + 200),
        "error": _storable(record.error, IntegrationLog.ERROR_LIMIT),
    }


def line_of(record: CallRecord) -> IntegrationLog:
    """The log line of ``record``, not saved."""
    line = IntegrationLog(**line_values(record))
    if record.installation is not None:
        line.installation = record.installation  # the caller's, not read again
    return line


def integration_log_record(record: CallRecord) -> IntegrationLog | None:
    """Store one call's log line; None when the database refused it (logged, not raised)."""
    line = line_of(record)
    connection = transaction.get_connection()
    own_transaction = not connection.in_atomic_block
    try:
        with transaction.atomic():  # a savepoint in a caller's transaction: its own otherwise
            if own_transaction:
                synchronous_commit_off(connection)
            _insert(line)
    except DatabaseError:
        logger.exception("integration %s: the call's log line was not stored", line.integration_id)
        return None
    return line


def synchronous_commit_off(connection, *, session: bool = False) -> None:
    """This transaction's commit does not wait for PostgreSQL to flush it to disk (2 ms of a
    call here): a log line is a diagnostic, and a database crash loses at most the lines of
    its last moments, never corrupts. Only in a transaction of the log lines' own, never in
    a caller's, whose writes must be durable; nothing on other databases. ``session``: every
    commit of the connection's session, for a connection that writes log lines alone (the
    log writer's thread, ``log_batches``)."""
    if connection.vendor != "postgresql":
        return
    with connection.cursor() as cursor:
        cursor.execute(f"SET {'' if session else 'LOCAL '}synchronous_commit TO OFF")


_NUMBER_TYPES = {"PositiveIntegerField", "PositiveSmallIntegerField", "BigAutoField"}
_LOG_FIELDS = [field for field in IntegrationLog._meta.concrete_fields if not field.primary_key]


def _stand_in_of(field):
    if isinstance(field, models.BooleanField):
        return stand_in(f"log-{field.attname}")
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
    """The INSERT compiled with a stand-in per column. A boolean column takes no text
    stand-in (its field would refuse it): it is compiled with False, and its parameter, at its
    column's place (one per column, in the fields' order), replaced by its stand-in after."""
    booleans = {
        index: stand
        for index, ((attname, stand), field) in enumerate(zip(_COLUMNS, _LOG_FIELDS, strict=True))
        if isinstance(field, models.BooleanField)
    }
    template = IntegrationLog(
        **{
            attname: False if index in booleans else stand
            for index, (attname, stand) in enumerate(_COLUMNS)
        }
    )
    query = InsertQuery(IntegrationLog)
    query.insert_values(_LOG_FIELDS, [template])
    compiler = query.get_compiler(using=alias)
    compiler.returning_fields = [IntegrationLog._meta.pk]
    [(sql, params)] = compiler.as_sql()
    params = list(params)
    if len(params) != len(_LOG_FIELDS):  # one parameter per column, in the fields' order
        raise RuntimeError("the log line's INSERT has not one parameter per column")
    for index, stand in booleans.items():
        params[index] = stand
    return PreparedSQL(sql, params, using=alias)
