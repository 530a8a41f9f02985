"""Querysets compiled once and run many times: for the hot paths (an event's routing, a
drain's claim), where building and compiling the ORM's query cost more than running it.

A ``Prepared`` query is compiled from a queryset whose variable values are *stand-ins*
(values no real query holds: ``stand_in``, ``stand_in_time``, lists through ``stand_ins``
or ``values_of``); each run substitutes the real values for them in the compiled
parameters. Rows are converted and turned into model instances (with their
``select_related`` relations) as Django's own iterables do, from the compiler's description
of the query kept at compile time. ``PreparedSQL`` is a statement written by hand, run the
same way.
"""

import functools
import json
import zlib
from collections.abc import Hashable, Mapping, Sequence
from contextlib import contextmanager
from datetime import UTC, datetime

from django.conf import settings
from django.db import InterfaceError, OperationalError, connections
from django.db.models import QuerySet
from django.db.models.expressions import RawSQL
from django.db.models.query import get_related_populators


def stand_in(name: str) -> str:
    """A text stand-in for a value given at each run (no real value holds NUL bytes)."""
    return f"\x00{name}\x00"


def stand_ins(name: str, count: int, *, numbers: bool = False) -> list:
    """Stand-ins for the ``count`` values of a list, for ``field__in=`` in a query compiled
    once per length (PostgreSQL plans a list of values faster than ``values_of``'s
    subquery: where a statement is short, planning is most of its cost). ``numbers``: for
    an integer field, negative numbers far below any id, apart for each name."""
    if numbers:
        base = -(2**62) - (zlib.crc32(name.encode()) << 20)
        return [base - n for n in range(count)]
    return [stand_in(f"{name}{n}") for n in range(count)]


def stand_in_values(name: str, values: Sequence, *, numbers: bool = False) -> dict:
    """The values of a run for the query compiled with ``stand_ins(name, len(values))``."""
    return dict(zip(stand_ins(name, len(values), numbers=numbers), values, strict=True))


@functools.cache
def is_postgresql(alias: str = "default") -> bool:
    """Whether database ``alias`` is PostgreSQL: asked on paths every request takes, where
    looking the connection up (a thread's own, through asgiref's ``Local``) cost more than
    the answer; a process's databases do not change."""
    return connections[alias].vendor == "postgresql"


def values_of(name: str, db_type: str, *, using: str = "default") -> RawSQL:
    """A subquery of the values of a list given at each run as the stand-in ``name``, for
    ``field__in=``: an array on PostgreSQL (``db_type`` its element type), JSON on SQLite
    (``Prepared`` passes the list in the form its database reads)."""
    if connections[using].vendor == "postgresql":
        return RawSQL(f"SELECT unnest(%s::{db_type}[])", [stand_in(name)])  # noqa: S611
    return RawSQL("SELECT value FROM json_each(%s)", [stand_in(name)])


def stand_in_time(n: int) -> datetime:
    """A time stand-in: the ``n``-th second of year 1, which no real time holds."""
    return datetime(1, 1, 1, 0, 0, n, tzinfo=UTC)


class PreparedSQL:
    """A statement (``sql``, ``params`` with stand-ins) run many times on one database."""

    #: Whether a run that found its connection broken may run again on a new one: a read's
    #: (``Prepared``), never a write's, which may have been done before the connection broke.
    retry_safe = False

    def __init__(self, sql: str, params: Sequence, *, using: str):
        self.sql, self.params, self.alias = sql, tuple(params), using
        # Whether it returns rows, known from its first run: psycopg builds the cursor's
        # description anew at each reading, an object per column (a sixth of a public
        # endpoint's web CPU, for its 98 columns, when read at every run).
        self.returns_rows: bool | None = None

    def execute(self, values: Mapping[Hashable, object]) -> list[list]:
        """Run it with ``values`` for the stand-ins; its rows as they come (none for a
        statement that returns none)."""
        connection = connections[self.alias]
        adapt = connection.ops.adapt_datetimefield_value  # as the ORM passes times
        values = {
            stand: adapt(value) if isinstance(value, datetime) else value
            for key, value in values.items()
            # a time stand-in appears as given (in SQL written by hand) or as the ORM passed it
            for stand in ([key, adapt(key)] if isinstance(key, datetime) else [key])
        }
        parameters = [
            values.get(param, param) if isinstance(param, Hashable) else param
            for param in self.params
        ]
        if connection.vendor != "postgresql":  # lists for values_of, as JSON
            parameters = [json.dumps(p) if isinstance(p, list) else p for p in parameters]
        unchecked = self.retry_safe and _skip_health_check(connection)
        try:
            rows = self._run(connection, parameters)
        except (OperationalError, InterfaceError):
            if not unchecked or connection.is_usable():
                raise
            connection.close()  # as the health check would have: a broken connection
            rows = self._run(connection, parameters)
        log = connection.queries_log if connection.queries_logged else None
        if log and log[-1]["sql"] is None:  # Django cannot show a prepared statement's run
            log[-1]["sql"] = connection.ops.compose_sql(self.sql, parameters)
        return rows

    def _run(self, connection, parameters: list) -> list[list]:
        with _statement_cursor(connection) as cursor:
            cursor.execute(self.sql, parameters)
            if self.returns_rows is None:
                self.returns_rows = cursor.description is not None
            return [list(row) for row in cursor.fetchall()] if self.returns_rows else []


def _skip_health_check(connection) -> bool:
    """Whether the run about to start replaces Django's health check of a kept connection
    (``CONN_HEALTH_CHECKS``: a ``SELECT 1`` before a request's first statement, a round trip
    on every public endpoint request, whose one statement is a ``Prepared`` read): outside a
    transaction, a read that finds the connection broken is run again on a new one, which is
    what the check would have given it."""
    if (
        connection.connection is None
        or connection.in_atomic_block
        or not connection.health_check_enabled
        or connection.health_check_done
    ):
        return False
    connection.health_check_done = True
    return True


@contextmanager
def _statement_cursor(connection):
    """A cursor for a compiled statement. On PostgreSQL (unless ``DATABASE_PREPARED_STATEMENTS``
    is off, e.g. behind a transaction-pooling PgBouncer older than 1.21), one of psycopg's
    server-side binding cursors, whose statements the connection prepares on their first run
    and then only executes: PostgreSQL no longer parses and plans them each time (the
    installation a runtime call reads: 1.1 ms -> 0.15). Django's own cursors bind on the
    client, which never prepares, so the connection's threshold changes nothing for them."""
    if connection.vendor != "postgresql" or not settings.DATABASE_PREPARED_STATEMENTS:
        with connection.cursor() as cursor:
            yield cursor
        return
    from django.db.backends.postgresql.base import ServerBindingCursor

    connection.ensure_connection()
    raw = connection.connection
    raw.prepare_threshold = 0
    factory, raw.cursor_factory = raw.cursor_factory, ServerBindingCursor
    try:
        cursor = connection.cursor()  # Django's wrapping: query logging, error translation
    finally:
        raw.cursor_factory = factory
    with cursor:
        yield cursor


class Prepared(PreparedSQL):
    """A queryset's SQL and how to read its rows, compiled once for its database."""

    retry_safe = True  # a SELECT; in a transaction (FOR UPDATE) it is never run again

    def __init__(self, queryset: QuerySet):
        compiler = queryset.query.get_compiler(using=queryset.db)
        super().__init__(*compiler.as_sql(), using=queryset.db)
        select = compiler.select[: compiler.col_count]
        self.converters = list(compiler.get_converters([column for column, _, _ in select]).items())
        self.klass_info = compiler.klass_info
        if self.klass_info is not None:  # rows are instances of a model
            fields = self.klass_info["select_fields"]
            self.model_columns = slice(fields[0], fields[-1] + 1)
            self.init_list = [column.target.attname for column, _, _ in select[self.model_columns]]
            self.populators = get_related_populators(self.klass_info, select, self.alias)
            self.annotations = list((compiler.annotation_col_map or {}).items())

    def position_of(self, attname: str) -> int:
        """Where the model's column ``attname`` is in a row as ``execute`` returns it."""
        return self.model_columns.start + self.init_list.index(attname)

    def rows(self, values: Mapping[Hashable, object], *, read: list[list] | None = None):
        """Run it with ``values`` for the stand-ins; the rows, converted as the ORM would.
        ``read``: rows as ``execute`` returned them (kept from an earlier run), not run again."""
        rows = self.execute(values) if read is None else read
        connection = connections[self.alias]
        for position, (functions, expression) in self.converters:
            for row in rows:
                value = row[position]
                for convert in functions:
                    value = convert(value, expression, connection)
                row[position] = value
        return rows

    def instances(self, values: Mapping[Hashable, object], *, read: list[list] | None = None):
        """Run it (unless ``read``: as ``rows``); the model instances, with their related
        instances and annotations set."""
        model = self.klass_info["model"]
        instances = []
        for row in self.rows(values, read=read):
            instance = model.from_db(self.alias, self.init_list, row[self.model_columns])
            for populator in self.populators:
                populator.populate(row, instance)
            for name, position in self.annotations:
                setattr(instance, name, row[position])
            instances.append(instance)
        return instances
