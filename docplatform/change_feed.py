"""Which rows changed, as PostgreSQL tells each process (``LISTEN``/``NOTIFY``): for what a
process keeps read across requests (``docplatform.kept_reads``).

A table's rows tell the feed of their changes through the trigger ``notify_change(kind,
column)`` (its migration: ``docplatform/migrations/0026_change_feed.py``): each row written,
inserted or deleted sends ``kind:value`` (the row's ``column``), a ``TRUNCATE`` sends ``*``.
Subscribers (``subscribe``) are told each one, and ``*`` whenever the feed cannot vouch for
what came before (its connection made, lost or closed).

``synced()`` is the feed's promise, strict: once it returns an epoch, every change committed
before it was called has reached the subscribers. It sends an empty statement on the
feed's own connection and waits for the answer: PostgreSQL sends a listening session's
pending notifications before it says it is ready again. Calls that come while another's is
on its way wait for the next one; a call that finds one begun after it came takes its
answer. None when the feed cannot promise: off (``DATABASE_CHANGE_FEED``, SQLite), its
connection lost (tried again after ``RETRY_SECONDS``), or its own test notification did not
come back (a pooler that does not keep a session's ``LISTEN``: PgBouncer in transaction
mode). A subscriber then reads the database as if it kept nothing.

Writes that fire no trigger (``session_replication_role = replica``, as logical
replication and some restores set it) are not seen: restart the web processes after them.
"""

import logging
import math
import os
import select
import threading
import time
from collections.abc import Callable

import psycopg
from django.conf import settings
from django.db import connections
from psycopg import pq

from .queries import is_postgresql

logger = logging.getLogger("docplatform.change_feed")

CHANNEL = "docplatform_changes"
#: The feed's sessions, as ``pg_stat_activity`` shows them (``session_name``).
NAME = "docplatform change feed"
#: What a subscriber is told when everything it keeps may be stale.
EVERYTHING = "*"
#: How long the feed waits before connecting again after its connection failed.
RETRY_SECONDS = 5.0
#: A feed unused this long closes its connection (its process serves no more calls that
#: need it); one connection per process that asks, for as long as it asks.
IDLE_SECONDS = 300.0
#: How often the feed's thread takes in what came while no request asked.
DRAIN_SECONDS = 1.0
#: How long a round trip may take before the connection is taken for lost.
ROUND_TRIP_SECONDS = 10.0
#: How long the test notification may take to come back when the feed connects.
PROBE_SECONDS = 2.0
#: The connection's parameters that are Django's and not libpq's.
_DJANGO_PARAMETERS = ("cursor_factory", "context", "prepare_threshold")


class ChangeFeed:
    def __init__(self, alias: str = "default"):
        self.alias = alias
        self._subscribers: list[Callable[[str], None]] = []
        self._lock = threading.Lock()
        self._connection: psycopg.Connection | None = None
        self._epoch = 0
        self._failed_at: float | None = None
        self._used_at = 0.0
        self._syncs_begun = 0
        self._syncs_done = 0
        self._probe: str | None = None
        self._probe_seen = False

    def subscribe(self, callback: Callable[[str], None]) -> None:
        """Call ``callback(change)`` for each change (``kind:value``, or ``EVERYTHING``), on
        whichever thread received it, with the feed's lock held: it must be quick and must not
        call the feed."""
        self._subscribers.append(callback)

    def synced(self) -> int | None:
        """The feed's epoch once every change committed before this call has reached the
        subscribers; None when the feed cannot say (module docstring)."""
        if not self.enabled():
            return None
        arrived = self._syncs_begun
        with self._lock:
            if self._connection is None and not self._connect():
                return None
            self._used_at = time.monotonic()
            if self._syncs_done > arrived:  # begun after this call came, and answered
                return self._epoch
            return self._epoch if self._sync() else None

    def close(self) -> None:
        """Close its connection (a test's end, before its database is dropped); the next
        ``synced()`` connects again."""
        with self._lock:
            if self._connection is not None:
                self._close()

    def enabled(self) -> bool:
        return settings.DATABASE_CHANGE_FEED and is_postgresql(self.alias)

    # With the lock held:

    def _sync(self) -> bool:
        self._syncs_begun += 1
        begun = self._syncs_begun
        try:
            self._round_trip(self._connection)
        except (psycopg.Error, OSError, TimeoutError) as error:
            self._lose(f"its connection failed ({error or type(error).__name__})")
            return False
        self._syncs_done = begun
        return True

    def _round_trip(self, connection: psycopg.Connection) -> None:
        """An empty statement and its answer, through libpq itself (half the CPU of
        psycopg's ``execute``, on every public endpoint request): PostgreSQL sends the
        session's pending notifications first, taken in here."""
        pgconn = connection.pgconn
        deadline = time.monotonic() + ROUND_TRIP_SECONDS
        pgconn.send_query(b";")
        while pgconn.flush():
            _wait(pgconn.socket, deadline, writing=True)
        while True:
            pgconn.consume_input()
            if not pgconn.is_busy():
                break
            _wait(pgconn.socket, deadline)
        while (result := pgconn.get_result()) is not None:
            if result.status == pq.ExecStatus.FATAL_ERROR:
                raise psycopg.OperationalError(result.error_message.decode(errors="replace"))
        self._take_in(pgconn)

    def _take_in(self, pgconn) -> None:
        while (notification := pgconn.notifies()) is not None:
            self._heard(notification.extra.decode())

    def _connect(self) -> bool:
        if self._failed_at is not None and time.monotonic() - self._failed_at < RETRY_SECONDS:
            return False
        params = connections[self.alias].get_connection_params()
        for name in _DJANGO_PARAMETERS:
            params.pop(name, None)
        try:
            connection = psycopg.connect(**params, autocommit=True, application_name=session_name())
        except psycopg.Error as error:
            self._failed_at = time.monotonic()
            logger.warning("change feed: cannot connect (%s); kept reads are off meanwhile", error)
            return False
        connection.add_notify_handler(self._received)
        self._probe, self._probe_seen = f"probe:{os.getpid()}:{time.monotonic_ns()}", False
        try:
            connection.execute(f"LISTEN {CHANNEL}")
            connection.execute("SELECT pg_notify(%s, %s)", (CHANNEL, self._probe))
            deadline = time.monotonic() + PROBE_SECONDS
            while not self._probe_seen and time.monotonic() < deadline:
                _ready(connection.fileno(), select.POLLIN, 0.05)
                self._round_trip(connection)
        except (psycopg.Error, OSError, TimeoutError) as error:
            connection.close()
            self._failed_at = time.monotonic()
            logger.warning("change feed: cannot listen (%s); kept reads are off meanwhile", error)
            return False
        if not self._probe_seen:
            connection.close()
            self._failed_at = time.monotonic()
            logger.warning(
                "change feed: its own notification did not come back (a pooler in transaction "
                "mode?); kept reads are off. Set DATABASE_CHANGE_FEED=false to say so."
            )
            return False
        self._connection, self._failed_at = connection, None
        self._epoch += 1
        self._tell(EVERYTHING)  # what was kept before this connection listened is unvouched
        threading.Thread(
            target=self._drain, args=(connection,), name="change feed", daemon=True
        ).start()
        return True

    def _lose(self, why: str) -> None:
        logger.warning("change feed: %s; kept reads are off until it connects again", why)
        self._close()
        self._failed_at = time.monotonic()

    def _close(self) -> None:
        connection, self._connection = self._connection, None
        self._epoch += 1
        self._tell(EVERYTHING)
        if connection is not None:
            connection.close()

    def _received(self, notification) -> None:
        self._heard(notification.payload)

    def _heard(self, change: str) -> None:
        if change == self._probe:
            self._probe_seen = True
        else:
            self._tell(change)

    def _tell(self, change: str) -> None:
        for callback in self._subscribers:
            callback(change)

    def _drain(self, connection: psycopg.Connection) -> None:
        """The feed's thread: every ``DRAIN_SECONDS``, takes in what came meanwhile without a
        round trip (a listening session whose client reads nothing holds back PostgreSQL's
        queue of notifications), finds a connection that broke, and closes one unused for
        ``IDLE_SECONDS``. (Not woken by each answer: a request's ``synced()`` would wake it.)"""
        while True:
            time.sleep(DRAIN_SECONDS)
            with self._lock:
                if self._connection is not connection:
                    return
                if time.monotonic() - self._used_at > IDLE_SECONDS:
                    self._close()
                    return
                try:
                    connection.pgconn.consume_input()
                except psycopg.Error as error:
                    self._lose(f"its connection failed ({error})")
                    return
                self._take_in(connection.pgconn)

    def forget_in_child(self) -> None:
        """In a forked child: the parent's connection is the parent's, dropped here unclosed
        (psycopg never ends a session from a process other than the one that opened it), and
        this process makes its own. Subscribers are not told (their locks may have been held
        by a thread of the parent at the fork: they forget on their own); what they kept
        under the parent's epoch is vouched for no more."""
        self._lock = threading.Lock()
        self._connection = None
        self._epoch += 1


def triggers_create(schema_editor, triggers) -> None:
    """In a migration: make each table of ``triggers`` ((table, kind, column), ...) tell the
    feed of its changes (``kind:column's value`` for each row written, ``*`` when truncated).
    PostgreSQL only: SQLite has no feed."""
    if schema_editor.connection.vendor != "postgresql":
        return
    for table, kind, column in triggers:
        schema_editor.execute(
            f"CREATE TRIGGER {table}_changed AFTER INSERT OR UPDATE OR DELETE ON {table} "
            f"FOR EACH ROW EXECUTE FUNCTION docplatform_notify_change('{kind}', '{column}')"
        )
        schema_editor.execute(
            f"CREATE TRIGGER {table}_truncated AFTER TRUNCATE ON {table} "
            "FOR EACH STATEMENT EXECUTE FUNCTION docplatform_notify_change()"
        )


def triggers_drop(schema_editor, triggers) -> None:
    """In a migration: undo ``triggers_create``."""
    if schema_editor.connection.vendor != "postgresql":
        return
    for table, _kind, _column in triggers:
        schema_editor.execute(f"DROP TRIGGER IF EXISTS {table}_changed ON {table}")
        schema_editor.execute(f"DROP TRIGGER IF EXISTS {table}_truncated ON {table}")


def session_name() -> str:
    """This process's feed session's ``application_name``."""
    return f"{NAME} (process {os.getpid()})"


def _wait(socket: int, deadline: float, *, writing: bool = False) -> None:
    remaining = deadline - time.monotonic()
    if remaining <= 0:
        raise TimeoutError(f"no answer in {ROUND_TRIP_SECONDS} s")
    _ready(socket, select.POLLOUT if writing else select.POLLIN, remaining)


def _ready(descriptor: int, events: int, timeout: float) -> None:
    """Until ``descriptor`` is ready for ``events`` (or closed), at most ``timeout`` s.
    ``poll``, not ``select``: a web process's connection may be numbered past 1,024."""
    poller = select.poll()
    poller.register(descriptor, events)
    poller.poll(math.ceil(timeout * 1000))


feed = ChangeFeed()
os.register_at_fork(after_in_child=feed.forget_in_child)
