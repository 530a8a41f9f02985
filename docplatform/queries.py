"""Querysets compiled once and run many times: for the hot paths (an event's routing, a
drain's claim), where building and compiling the ORM's query cost more than running it.

A ``Prepared`` query is compiled from a queryset whose variable values are *stand-ins*
(values no real query holds: see ``stand_in``); each run substitutes the real values for
them in the compiled parameters. Rows are converted and turned into model instances (with
their ``select_related`` relations) as Django's own iterables do, from the compiler's
description of the query kept at compile time.
"""

import json
from collections.abc import Hashable, Mapping, Sequence

from django.db import connections
from django.db.models import QuerySet
from django.db.models.expressions import RawSQL
from django.db.models.query import get_related_populators


def stand_in(name: str) -> str:
    """A text stand-in for a value given at each run (no real value holds NUL bytes)."""
    return f"\x00{name}\x00"


def values_of(name: str, db_type: str, *, using: str = "default") -> RawSQL:
    """A subquery of the values of a list given at each run as the stand-in ``name``, for
    ``field__in=``: an array on PostgreSQL (``db_type`` its element type), JSON on SQLite
    (``Prepared`` passes the list in the form its database reads)."""
    if connections[using].vendor == "postgresql":
        return RawSQL(f"SELECT unnest(%s::{db_type}[])", [stand_in(name)])  # noqa: S611
    return RawSQL("SELECT value FROM json_each(%s)", [stand_in(name)])


class Prepared:
    """A queryset's SQL and how to read its rows, compiled once for its database.

    ``prefix`` and ``prefix_params`` put SQL before the query's own (a ``WITH`` clause)."""

    def __init__(self, queryset: QuerySet, *, prefix: str = "", prefix_params: Sequence = ()):
        self.alias = queryset.db
        compiler = queryset.query.get_compiler(using=self.alias)
        sql, params = compiler.as_sql()
        self.sql = f"{prefix} {sql}" if prefix else sql
        self.params = (*prefix_params, *params)
        select = compiler.select[: compiler.col_count]
        self.converters = list(compiler.get_converters([column for column, _, _ in select]).items())
        self.klass_info = compiler.klass_info
        if self.klass_info is not None:  # rows are instances of a model
            fields = self.klass_info["select_fields"]
            self.model_columns = slice(fields[0], fields[-1] + 1)
            self.init_list = [column.target.attname for column, _, _ in select[self.model_columns]]
            self.populators = get_related_populators(self.klass_info, select, self.alias)

    def rows(self, values: Mapping[Hashable, object]) -> list[list]:
        """Run it with ``values`` for the stand-ins; the rows, converted as the ORM would."""
        connection = connections[self.alias]
        parameters = [
            values.get(param, param) if isinstance(param, Hashable) else param
            for param in self.params
        ]
        if connection.vendor != "postgresql":  # lists for values_of, as JSON
            parameters = [json.dumps(p) if isinstance(p, list) else p for p in parameters]
        with connection.cursor() as cursor:
            cursor.execute(self.sql, parameters)
            rows = [list(row) for row in cursor.fetchall()]
        for position, (functions, expression) in self.converters:
            for row in rows:
                value = row[position]
                for convert in functions:
                    value = convert(value, expression, connection)
                row[position] = value
        return rows

    def instances(self, values: Mapping[Hashable, object]) -> list:
        """Run it; the model instances, with their related instances set."""
        model = self.klass_info["model"]
        instances = []
        for row in self.rows(values):
            instance = model.from_db(self.alias, self.init_list, row[self.model_columns])
            for populator in self.populators:
                populator.populate(row, instance)
            instances.append(instance)
        return instances
