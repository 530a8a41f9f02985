"""Writing a fired event and its deliveries. On PostgreSQL, one statement compiled once
(``queries.PreparedSQL``) writes both: the ORM's create and bulk_create were 60 % of firing's
CPU (benchmarks/firing_profile.py). Elsewhere (SQLite, which has no INSERT in a WITH), the
ORM writes them.
"""

from django.db import connections, router

from ..queries import PreparedSQL, stand_in
from .models import Delivery, Event

#: Per (database, whether the deliveries go in arrays): the statement, and the stand-in of
#: each field of the event and of the deliveries that it writes.
_statements: dict[tuple[str, bool], tuple[PreparedSQL, list, list]] = {}


def event_insert(event: Event, deliveries: list[Delivery]) -> None:
    """Insert ``event`` and its ``deliveries`` in the caller's transaction, and complete the
    instances as the ORM's ``save`` and ``bulk_create`` do: their ``auto_now_add`` times, the
    deliveries' ids, their state (saved, in that database)."""
    using = router.db_for_write(Event)
    connection = connections[using]
    if connection.vendor != "postgresql":
        event.save(force_insert=True, using=using)
        Delivery.objects.using(using).bulk_create(deliveries)
        return
    # As Django's bulk insert: one row as values, several (or none) as arrays, one per
    # column, whatever their number (a list costs psycopg more to send than a value).
    arrays = len(deliveries) != 1
    if (using, arrays) not in _statements:
        _statements[using, arrays] = _statement(connection, arrays=arrays)
    statement, event_params, delivery_params = _statements[using, arrays]
    values = {key: _db_value(field, event, connection) for key, field in event_params}
    for key, field in delivery_params:
        if arrays:
            values[key] = [_db_value(field, delivery, connection) for delivery in deliveries]
        else:
            values[key] = _db_value(field, deliveries[0], connection)
    for delivery, (pk,) in zip(deliveries, statement.execute(values), strict=True):
        delivery.pk = pk
    for instance in [event, *deliveries]:
        instance._state.adding = False
        instance._state.db = using


def _db_value(field, instance, connection):
    """A field's value as the ORM's insert passes it (``pre_save`` sets auto_now_add times)."""
    return field.get_db_prep_save(field.pre_save(instance, True), connection)


def _statement(connection, *, arrays: bool) -> tuple[PreparedSQL, list, list]:
    """The event's row and its deliveries' (values, or arrays), their ids returned in the
    deliveries' order."""
    quote = connection.ops.quote_name
    event_fields = list(Event._meta.concrete_fields)
    delivery_fields = [field for field in Delivery._meta.concrete_fields if not field.primary_key]

    def columns(fields):
        return ", ".join(quote(field.column) for field in fields)

    if arrays:  # no length in their types (varchar[], not varchar(16)[]): no value is cut
        types = [field.db_type(connection).split("(")[0] for field in delivery_fields]
        rows = f"SELECT * FROM unnest({', '.join(f'(%s)::{t}[]' for t in types)})"  # noqa: S608
    else:
        rows = f"VALUES ({', '.join(['%s'] * len(delivery_fields))})"
    sql = (
        f"WITH event AS (INSERT INTO {quote(Event._meta.db_table)} ({columns(event_fields)}) "  # noqa: S608
        f"VALUES ({', '.join(['%s'] * len(event_fields))})) "
        f"INSERT INTO {quote(Delivery._meta.db_table)} ({columns(delivery_fields)}) {rows} "
        f"RETURNING {quote(Delivery._meta.pk.column)}"
    )
    event_params = [(stand_in(f"event.{field.attname}"), field) for field in event_fields]
    delivery_params = [(stand_in(f"delivery.{field.attname}"), field) for field in delivery_fields]
    params = [key for key, _ in event_params + delivery_params]
    return PreparedSQL(sql, params, using=connection.alias), event_params, delivery_params
