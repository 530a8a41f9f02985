"""The log lines of a web process's calls, written in batches by a thread of their own.

A public endpoint's or a component's request has its call's log line written once its answer
is sent (``call_log.after_answer``). Written there, each line costs the request's thread a
transaction of its own (four statements), which holds up the next request on the same
keep-alive connection and, under load, a share of the process's CPU. With
``RUNTIME_LOG_BATCH_SECONDS`` above 0 on PostgreSQL, the lines are handed to this process's
writer instead, which writes what came in the last interval (or sooner, ``BATCH_LINES`` at a
time) in one ``COPY`` and one transaction: a line shows in the Logs page that much later.
(``COPY`` rather than the ORM's many-row INSERT: under load, building and quoting that
INSERT was a seventh of a web process's CPU, and PostgreSQL parsed every value of it.) The
writer's own connection stays in autocommit, where one ``COPY`` is one transaction, and its
session commits without waiting for the disk (``synchronous_commit``, as ``log_store`` says
why): a batch is one round trip's statement, not four (BEGIN, SET LOCAL, COPY, COMMIT), which
under load was a sixth of a web process's CPU.

What a line costs the call is unchanged: it never fails the request. A batch with a row the
database refuses is written again line by line, so only a line refused on its own (an
installation deleted meanwhile) is lost, logged; a batch that finds the database unreachable
is lost with one error logged. A process that stops writes what it holds
(``atexit``); one killed loses at most its last interval's lines. A forked child (a
preloading server's worker) starts with nothing of its parent's, which writes its own.
"""

import atexit
import logging
import os
import threading
from functools import partial

from django.conf import settings
from django.db import DatabaseError, IntegrityError, connection, transaction
from psycopg import sql

from docplatform.queries import is_postgresql

from ..models import IntegrationLog
from .log_store import CallRecord, integration_log_record, line_values, synchronous_commit_off

logger = logging.getLogger("integrations.services.logs")

#: Lines written at once at most; a writer holding as many writes before its interval ends.
BATCH_LINES = 500
#: The writer's shortest wait: an interval of 0 (batching off, a test's setting restored
#: while the thread runs) must not make it spin.
SHORTEST_WAIT = 0.05


def batching() -> bool:
    """Whether this process's lines go to the writer: on PostgreSQL, with an interval set
    (SQLite, the embedded default, has one writer at a time: a thread of its own would
    contend with the requests' own writes)."""
    return settings.RUNTIME_LOG_BATCH_SECONDS > 0 and is_postgresql()


class LogWriter:
    """The process's writer: ``add`` hands it lines; its thread starts at the first."""

    def __init__(self):
        self._lock = threading.Lock()
        self._lines: list[CallRecord] = []
        self._wake = threading.Event()
        self._thread: threading.Thread | None = None
        self._closing = False
        # The writer thread's connection once its session was set not to wait for the disk.
        self._unsynchronized = None

    def add(self, records: list[CallRecord]):
        with self._lock:
            self._lines.extend(records)
            if self._thread is None or not self._thread.is_alive():
                self._thread = threading.Thread(
                    target=self._run, name="integration log writer", daemon=True
                )
                self._thread.start()
            if len(self._lines) >= BATCH_LINES:
                self._wake.set()

    def flush(self):
        """Write every line held now (a stopping process, a test), each batch in a
        transaction of its own (a savepoint in a caller's)."""
        self._write_held(partial(_store, copy=_copy_in_transaction))

    def _write_held(self, write):
        while True:
            with self._lock:
                batch, self._lines = self._lines[:BATCH_LINES], self._lines[BATCH_LINES:]
            if not batch:
                return
            write(batch)

    def _copy_unsynchronized(self, batch: list[CallRecord]):
        """The writer thread's write: its connection's session commits without waiting for
        the disk, set once per connection; in autocommit the ``COPY`` is the transaction."""
        connection.ensure_connection()
        if connection.connection is not self._unsynchronized:
            synchronous_commit_off(connection, session=True)
            self._unsynchronized = connection.connection
        _copy(batch)

    def close(self):
        """Write what is held and end the thread, its database connection closed (before a
        test database is dropped); a later ``add`` starts it again."""
        with self._lock:
            thread, self._closing = self._thread, True
        if thread is not None:
            self._wake.set()
            thread.join()
        with self._lock:
            self._thread, self._closing = None, False
        self.flush()

    def forget(self):
        """In a forked child: the parent's lines and thread are the parent's."""
        self._lock = threading.Lock()
        self._lines, self._thread, self._unsynchronized = [], None, None
        self._wake = threading.Event()

    def _run(self):
        closing = False
        while not closing:
            self._wake.wait(max(settings.RUNTIME_LOG_BATCH_SECONDS, SHORTEST_WAIT))
            self._wake.clear()
            closing = self._closing
            try:
                self._write_held(partial(_store, copy=self._copy_unsynchronized))
            except Exception:  # never the writer's end: the next lines would pile up
                logger.exception("integration log lines were not stored")
            finally:
                if closing:
                    connection.close()
                else:
                    connection.close_if_unusable_or_obsolete()


_COLUMNS = [field for field in IntegrationLog._meta.concrete_fields if not field.primary_key]
_COPY = sql.SQL("COPY {table} ({columns}) FROM STDIN").format(
    table=sql.Identifier(IntegrationLog._meta.db_table),
    columns=sql.SQL(", ").join(sql.Identifier(field.column) for field in _COLUMNS),
)


def _copy(batch: list[CallRecord]):
    """Store the lines of ``batch`` with one ``COPY`` (PostgreSQL). The values go as they are
    (times, texts, numbers, booleans: psycopg writes each as the column reads it), with no
    model instance per line: under load, building them was a third of the writer's CPU."""
    attnames = [field.attname for field in _COLUMNS]
    with (
        connection.cursor() as cursor,
        connection.wrap_database_errors,
        cursor.cursor.copy(_COPY) as copy,
    ):
        for record in batch:
            values = line_values(record)
            copy.write_row([values[attname] for attname in attnames])


def _copy_in_transaction(batch: list[CallRecord]):
    with transaction.atomic():
        synchronous_commit_off(connection)
        _copy(batch)


def _store(batch: list[CallRecord], *, copy):
    """``copy`` the lines of ``batch``; when a line is refused, each on its own."""
    try:
        copy(batch)
    except IntegrityError:
        # One refused line (its installation deleted meanwhile) refuses the whole INSERT:
        # the others are written on their own, each refused one logged.
        for record in batch:
            integration_log_record(record)
    except DatabaseError:  # the database unreachable: one error for the batch, not a line's
        logger.exception("%d integration log lines were not stored", len(batch))


writer = LogWriter()
atexit.register(writer.flush)
os.register_at_fork(after_in_child=writer.forget)
