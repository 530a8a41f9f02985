"""Reads of a space as a person may read it."""

from django.http import Http404

from ..models import Space
from ..queries import Prepared, stand_in
from . import access

_SPACE_ID = stand_in("space")
_compiled: dict[tuple, Prepared] = {}


def _prepared(name: str, build) -> Prepared:
    """The query ``build()`` makes, compiled once per database: the reader runs it at every
    read, and compiling it cost more than running it."""
    key = (name, Space.objects.db)
    if key not in _compiled:
        _compiled[key] = Prepared(build())
    return _compiled[key]


def space_for_reader(user, space_id: str) -> tuple[Space, str | None]:
    """The space and the user's role in its organization; Http404 when the user may not read
    it (a private space of another organization is as unknown as a missing one)."""
    spaces = _prepared(
        "space", lambda: Space.objects.select_related("organization").filter(pk=_SPACE_ID)
    ).instances({_SPACE_ID: space_id})
    if not spaces:
        raise Http404("No such space.")
    space = spaces[0]
    role = access.role_in(user, space.organization_id)
    if not access.may_read(role, space):
        raise Http404("No such space.")
    return space, role


# --- History -----------------------------------------------------------------------------------
