"""Keyset pages of the lists that grow without bound (an organization's events, an
installation's deliveries): newest first by ``(created_at, id)``, each page read from where
the previous one ended, so a page costs the same whatever its depth and nothing counts the
whole table (no ``COUNT(*)``, no ``OFFSET``).

A cursor is opaque to clients: ``n`` (older than) or ``p`` (newer than), the row's
``created_at`` and its id, base64url-encoded. The API's paginator (``docplatform.api.
pagination``) and the delivery log page (``marketplace.delivery_views``) both read pages
here. Each list has an index on ``(<its owner>, created_at, id)`` that serves the page's
query (docplatform migration 0022).

**Decision: a condition the index can seek to.** A page after ``(t, i)`` is read with
``created_at <= t AND (created_at < t OR id < i)``: the first half bounds the index scan (it
starts at ``t``), the second drops the rows of ``t`` already shown. The OR alone would scan
from the newest row and filter, which costs what an offset costs.
"""

import base64
import binascii
from dataclasses import dataclass
from datetime import datetime

from django.core.exceptions import ValidationError
from django.db.models import Q, QuerySet

OLDER, NEWER = "n", "p"
NOT_A_CURSOR = "not a cursor of this list: give a previous answer's next or previous"
NEWEST_FIRST = ("-created_at", "-id")


class BadCursor(ValueError):
    """A cursor this list never gave."""


@dataclass(frozen=True)
class Cursor:
    direction: str  # OLDER: the rows after it (older); NEWER: those before it
    created_at: datetime
    id: object


@dataclass
class Page:
    rows: list
    older: str | None  # the cursor of the next page (older rows), if there are any
    newer: str | None  # the cursor of the previous page (newer rows), if there are any


def cursor_encode(direction: str, row) -> str:
    text = f"{direction}|{row.created_at.isoformat()}|{row.pk}"
    return base64.urlsafe_b64encode(text.encode()).decode().rstrip("=")


def cursor_decode(encoded: str, queryset: QuerySet) -> Cursor:
    """The cursor ``encoded`` stands for, with its id in the list's key type; BadCursor
    saying what is wrong with it."""
    try:
        padded = encoded + "=" * (-len(encoded) % 4)
        text = base64.urlsafe_b64decode(padded.encode("ascii")).decode()
        direction, created_at, key = text.split("|", 2)
        when = datetime.fromisoformat(created_at)
        key = queryset.model._meta.pk.to_python(key)
    except (UnicodeError, binascii.Error, ValueError, ValidationError) as exc:
        raise BadCursor(NOT_A_CURSOR) from exc
    if direction not in (OLDER, NEWER) or when.tzinfo is None or key in (None, ""):
        raise BadCursor(NOT_A_CURSOR)
    return Cursor(direction, when, key)


def keyset_page(queryset: QuerySet, *, cursor: str | None, limit: int) -> Page:
    """One page of ``queryset``, newest first, of at most ``limit`` rows: the newest, or those
    the cursor points to (BadCursor when it is not one). Reads ``limit + 1`` rows, no count."""
    if cursor is None:
        rows = list(queryset.order_by(*NEWEST_FIRST)[: limit + 1])
        more = len(rows) > limit
        rows = rows[:limit]
        return Page(rows, older=_cursor(OLDER, rows, -1) if more else None, newer=None)
    at = cursor_decode(cursor, queryset)
    if at.direction == OLDER:
        rows = list(
            queryset.filter(created_at__lte=at.created_at)
            .filter(Q(created_at__lt=at.created_at) | Q(pk__lt=at.id))
            .order_by(*NEWEST_FIRST)[: limit + 1]
        )
        more = len(rows) > limit
        rows = rows[:limit]
        return Page(
            rows, older=_cursor(OLDER, rows, -1) if more else None, newer=_cursor(NEWER, rows, 0)
        )
    rows = list(
        queryset.filter(created_at__gte=at.created_at)
        .filter(Q(created_at__gt=at.created_at) | Q(pk__gt=at.id))
        .order_by("created_at", "id")[: limit + 1]
    )
    more = len(rows) > limit
    rows = rows[:limit][::-1]
    return Page(
        rows, older=_cursor(OLDER, rows, -1), newer=_cursor(NEWER, rows, 0) if more else None
    )


def _cursor(direction: str, rows: list, index: int) -> str | None:
    """The cursor past ``rows[index]`` (none for an empty page)."""
    return cursor_encode(direction, rows[index]) if rows else None
