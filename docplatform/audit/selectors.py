"""Reads of the audit log."""

from django.db.models import Q, QuerySet

from ..access import member_user_ids
from .models import AuditEntry


def _rows_of(organization) -> QuerySet:
    """The organization's own rows, and the rows of its people's own (their personal
    tokens, which reach it)."""
    return AuditEntry.objects.filter(
        Q(organization_id=organization.pk)
        | Q(organization_id="", actor_user_id__in=member_user_ids(organization))
    )


def audit_entries(
    organization, *, actor: str = "", action: str = "", since=None, until=None
) -> QuerySet:
    """The organization's audit log, newest first. ``actor`` matches a username or an
    installation id, ``action`` an action or its prefix (``invitation`` for all of
    ``invitation.*``); ``since`` is inclusive, ``until`` exclusive."""
    rows = _rows_of(organization)
    if actor:
        rows = rows.filter(Q(actor_label=actor) | Q(actor_id=actor))
    if action:
        rows = rows.filter(Q(action=action) | Q(action__startswith=f"{action}."))
    if since is not None:
        rows = rows.filter(at__gte=since)
    if until is not None:
        rows = rows.filter(at__lt=until)
    return rows.order_by("-at", "-id")


def audit_actions(organization) -> list[str]:
    """The actions the organization's log holds, in order: what its page's filter offers."""
    return list(
        _rows_of(organization).order_by("action").values_list("action", flat=True).distinct()
    )
