"""When a read of a space is a view: ``space_view`` fires at most once per visitor, space and
``READER_VIEW_INTERVAL`` (the row's time is the lock, across every process), and who a reader
is for that rule (``reader_identity``, which the sites' visits use too)."""

import hashlib
from datetime import timedelta

from django.db import IntegrityError, transaction
from django.utils import timezone

from .. import services
from ..events import Visitor
from ..models import Space, SpaceVisit

#: A visitor's reads of one space fire ``space_view`` at most this often (README).
READER_VIEW_INTERVAL = timedelta(minutes=5)


def space_view_from_reader(*, space: Space, visitor: Visitor, who: str) -> bool:
    """The visitor opened the space's reader: fire ``space_view``, at most once per visitor
    (``who``: ``reader_identity``), space and READER_VIEW_INTERVAL (across every process:
    the row's time is the lock). Whether it fired."""
    now = timezone.now()
    with transaction.atomic():
        renewed = SpaceVisit.objects.filter(
            space=space, visitor=who, last_fired_at__lte=now - READER_VIEW_INTERVAL
        ).update(last_fired_at=now)
        if not renewed:
            try:
                with transaction.atomic():
                    SpaceVisit.objects.create(space=space, visitor=who, last_fired_at=now)
            except IntegrityError:
                return False  # seen within the interval (or by a concurrent read)
        services.space_view_record(space=space, visitor=visitor)
    return True


def space_visits_purge() -> int:
    """Forget the visits older than READER_VIEW_INTERVAL: their next read fires again
    anyway, so their rows only grow the table (one per visitor and space)."""
    deleted, _ = SpaceVisit.objects.filter(
        last_fired_at__lt=timezone.now() - READER_VIEW_INTERVAL
    ).delete()
    return deleted


def reader_identity(visitor: Visitor, *, known_cookie: bool) -> str:
    """Who a reader is for the view limit: the member; else the anonymous id of a browser that
    sent its cookie back; else (a first visit, or a client that keeps no cookie, which would
    otherwise get a new id, and fire again, on every request) its address and user agent."""
    if visitor.user_id:
        return f"user:{visitor.user_id}"
    if known_cookie:
        return f"anon:{visitor.anonymous_id}"
    digest = hashlib.sha256(f"{visitor.ip}\n{visitor.user_agent}".encode()).hexdigest()
    return f"addr:{digest[:40]}"
