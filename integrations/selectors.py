"""Reads of the integrations app."""

from django.db.models import Q


def json_list_has(field: str, value: str) -> Q:
    """Rows whose JSON list ``field`` holds the string ``value``.

    JSON ``contains`` is not available on SQLite, so this matches the quoted element in the
    JSON text, which works on SQLite and PostgreSQL alike (the values are plain slugs).
    """
    return Q(**{f"{field}__icontains": f'"{value}"'})
