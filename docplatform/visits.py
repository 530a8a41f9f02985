"""The one rule for "a view fires at most once per visitor and interval", whichever door the
view came through: the reader and ``POST /api/v1/spaces/{id}/views/`` (``space_view``, a
``SpaceVisit`` row per visitor and space, ``READER_VIEW_INTERVAL``), a published site's pages
and the beacon (``site_view``, a ``SiteVisit`` row per visitor, site and page,
``SITE_VIEW_INTERVAL``).

The row's ``last_fired_at`` is the lock, across every process: a view marks it (an update of a
row older than the interval, else an insert the unique constraint lets through once) and fires
in the same transaction, or neither. A flag in the shared cache, kept for the interval, spares
the database round trip at the views that follow within it; the row decides when the flag is
gone (another cache, an eviction). Who a visitor is for the rule: ``reader_identity``."""

import hashlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import timedelta

from django.core.cache import cache
from django.db import IntegrityError, models, transaction
from django.utils import timezone

from .events import Visitor

#: A visitor's reads of one space fire ``space_view`` at most this often (README).
READER_VIEW_INTERVAL = timedelta(minutes=5)
#: A visitor's views of one page of a site fire ``site_view`` at most this often (README).
SITE_VIEW_INTERVAL = timedelta(minutes=1)


@dataclass(frozen=True)
class VisitKind:
    """A kind of view the rule counts: the table holding a row per visitor and what they
    viewed (its ``last_fired_at`` the lock) and how long a view stands."""

    rows: type[models.Model]
    interval: timedelta


def view_fire_once(
    kind: VisitKind, what: Mapping, *, visitor: Visitor, who: str, fire: Callable[[], None]
) -> bool:
    """``fire()`` unless the visitor (``who``: ``reader_identity``) viewed ``what`` (the row's
    other identifying fields: the space; the site and page) within ``kind.interval``; whether
    it fired. A browser counted by its address is given an anonymous id it will send back:
    that id has viewed ``what`` too, so the next view, with the cookie, is not another one."""
    seen = _seen_key(kind, what, who)
    if cache.get(seen):
        return False
    now = timezone.now()
    with transaction.atomic():
        fired = _marked(kind, what, who, now)
        if fired:
            given = f"anon:{visitor.anonymous_id}"
            if who.startswith("addr:") and _marked(kind, what, given, now):
                cache.set(_seen_key(kind, what, given), True, kind.interval.total_seconds())
            fire()
    cache.set(seen, True, kind.interval.total_seconds())
    return fired


def visits_purge(kind: VisitKind) -> int:
    """Forget the views older than the interval: the next one fires again anyway, so their rows
    only grow the table."""
    cutoff = timezone.now() - kind.interval
    deleted, _ = kind.rows.objects.filter(last_fired_at__lt=cutoff).delete()
    return deleted


def reader_identity(visitor: Visitor, *, known_cookie: bool) -> str:
    """Who a reader is for the rule: the member; else the anonymous id of a browser that sent
    its cookie back; else (a first visit, or a client that keeps no cookie, which would
    otherwise get a new id, and fire again, on every request) its address and user agent."""
    if visitor.user_id:
        return f"user:{visitor.user_id}"
    if known_cookie:
        return f"anon:{visitor.anonymous_id}"
    digest = hashlib.sha256(f"{visitor.ip}\n{visitor.user_agent}".encode()).hexdigest()
    return f"addr:{digest[:40]}"


def _marked(kind: VisitKind, what: Mapping, who: str, now) -> bool:
    """Mark the view now unless one was marked within the interval: whether it was."""
    rows = kind.rows.objects.filter(**what, visitor=who)
    if rows.filter(last_fired_at__lte=now - kind.interval).update(last_fired_at=now):
        return True
    try:
        with transaction.atomic():
            kind.rows.objects.create(**what, visitor=who, last_fired_at=now)
    except IntegrityError:
        return False  # viewed within the interval (or by a concurrent request)
    return True


def _seen_key(kind: VisitKind, what: Mapping, who: str) -> str:
    fields = sorted((name, str(getattr(value, "pk", value))) for name, value in what.items())
    text = repr((kind.rows._meta.label, fields, who))
    return "view-seen:1:" + hashlib.sha256(text.encode()).hexdigest()
