"""When a read of a space is a view: ``space_view`` fires at most once per visitor, space and
``READER_VIEW_INTERVAL``, by the one rule of every view (``docplatform.visits``), whichever
door the read came through (the reader, ``POST /api/v1/spaces/{id}/views/``)."""

from .. import services
from ..events import Visitor
from ..models import Space, SpaceVisit
from ..visits import READER_VIEW_INTERVAL, VisitKind, view_fire_once, visits_purge

#: ``space_view``: a ``SpaceVisit`` row per visitor and space.
SPACE_VIEWS = VisitKind(SpaceVisit, READER_VIEW_INTERVAL)


def space_view_once(*, space: Space, visitor: Visitor, who: str) -> bool:
    """The visitor read the space: fire ``space_view``, at most once per visitor (``who``:
    ``visits.reader_identity``), space and READER_VIEW_INTERVAL. Whether it fired."""
    return view_fire_once(
        SPACE_VIEWS,
        {"space": space},
        visitor=visitor,
        who=who,
        fire=lambda: services.space_view_record(space=space, visitor=visitor),
    )


def space_visits_purge() -> int:
    """Forget the visits older than READER_VIEW_INTERVAL (one row per visitor and space)."""
    return visits_purge(SPACE_VIEWS)
