"""The statements of the drain request flag (``DrainRequest.requested_at``; how it works:
``outbox._drain_send``), compiled once per database (``queries.PreparedSQL``): every commit
that fires an event to a drained consumer reads the flag, and one that sends a drain marks
it before and after its publish.
"""

from datetime import datetime

from django.db import connection

from ..queries import PreparedSQL, stand_in
from .models import DrainRequest

_CONSUMER, _PUBLISHING, _NOW, _VALUE = (
    stand_in(name) for name in ("consumer", "publishing", "now", "value")
)
_compiled: dict[str, dict[str, PreparedSQL]] = {}


def drain_flag_set(consumer: str, publishing: datetime, *, now: datetime, force: bool) -> bool:
    """Mark the consumer's drain as being published (``publishing``: its deadline) if no
    drain was sent (the flag is clear, or another publish is in progress), or if ``force``;
    whether this call marked it. Unless ``force``, a plain read first: a flag found set costs
    no write (an upsert that changes nothing still locks the row, which writes WAL and a
    commit). Then one upsert: a missing row is no obstacle."""
    statements = _statements()
    values = {_CONSUMER: consumer, _PUBLISHING: publishing, _NOW: now}
    if force:
        return bool(statements["set"].execute(values))
    if statements["sent"].execute(values):
        return False
    return bool(statements["set unless sent"].execute(values))


def drain_flag_replace(consumer: str, publishing: datetime, value: datetime | None) -> None:
    """Set the flag to ``value`` if it still holds ``publishing`` (this call's mark: a drain
    may have cleared it meanwhile, or another producer taken over)."""
    _statements()["replace"].execute({_CONSUMER: consumer, _PUBLISHING: publishing, _VALUE: value})


def _statements() -> dict[str, PreparedSQL]:
    """Whether a drain was sent ("sent": a row, or none); the upsert marking a publish,
    always ("set") or only if no drain was sent ("set unless sent"), a row if it did; and
    "replace"."""
    using = connection.alias
    if using not in _compiled:
        table = connection.ops.quote_name(DrainRequest._meta.db_table)
        upsert = (
            f"INSERT INTO {table} (consumer, requested_at) VALUES (%s, %s) "  # noqa: S608
            f"ON CONFLICT (consumer) DO UPDATE SET requested_at = excluded.requested_at "
        )
        unless_sent = f"WHERE {table}.requested_at IS NULL OR {table}.requested_at > %s "
        sql = {
            "sent": (
                f"SELECT 1 FROM {table} WHERE consumer = %s AND requested_at <= %s",  # noqa: S608
                [_CONSUMER, _NOW],
            ),
            "set": (f"{upsert}RETURNING consumer", [_CONSUMER, _PUBLISHING]),
            "set unless sent": (
                f"{upsert}{unless_sent}RETURNING consumer",
                [_CONSUMER, _PUBLISHING, _NOW],
            ),
            "replace": (
                f"UPDATE {table} SET requested_at = %s "  # noqa: S608
                f"WHERE consumer = %s AND requested_at = %s",
                [_VALUE, _CONSUMER, _PUBLISHING],
            ),
        }
        _compiled[using] = {
            name: PreparedSQL(text, params, using=using) for name, (text, params) in sql.items()
        }
    return _compiled[using]
