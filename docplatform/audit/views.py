"""The Audit log page of an organization (``/orgs/<subdomain>/audit-log/``): the rows of its
log, newest first, with filters and pages. Its admins only (``Action.READ_AUDIT_LOG``); a
member or a reader gets the 403 page naming who may, anyone else 404."""

import re
from datetime import UTC, datetime

from django.core.paginator import Paginator

from ..access import Action
from ..pages import OrganizationPage
from .forms import AuditLogFilterForm
from .selectors import audit_actions, audit_entries

PAGE_SIZE = 50
_WORD_BREAK = re.compile(r"_|(?<=[a-z])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])")
_TIME = re.compile(r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:\d{2})")


def _words(key: str) -> str:
    """``old_role``, ``oldRole``: "old role"; ``previousURL``: "previous url"."""
    return _WORD_BREAK.sub(" ", key).lower()


def _value_in_words(value) -> str:
    if value is None:
        return "none"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, list):
        return ", ".join(_value_in_words(item) for item in value) or "none"
    if isinstance(value, dict):
        parts = (f"{_words(key)} {_value_in_words(value[key])}" for key in sorted(value))
        return ", ".join(parts) or "none"
    if isinstance(value, str) and _TIME.fullmatch(value):  # a time the writer kept as ISO 8601
        return _time_in_words(value)
    return str(value)


def _time_in_words(value: str) -> str:
    try:
        at = datetime.fromisoformat(value).astimezone(UTC)
    except (ValueError, OverflowError):  # shaped as a time, and not one: shown as it is
        return value
    return f"{at.day} {at:%b %Y, %H:%M} UTC"


def details_in_words(details: dict) -> str:
    """A row's details as a sentence an admin reads at a glance: ``{"properties": ["url"],
    "role": {"from": "member", "to": "admin"}, "expiresAt": "2026-03-08T10:00:00+00:00"}`` is
    "expires at: 8 Mar 2026, 10:00 UTC; properties: url; role: from member, to admin". Keys go
    in alphabetical order: PostgreSQL's jsonb keeps no order of its own."""
    return "; ".join(f"{_words(key)}: {_value_in_words(details[key])}" for key in sorted(details))


def _query_without_page(request) -> str:
    """The list's query string without ``page`` (the pager's links add their own)."""
    query = request.GET.copy()
    query.pop("page", None)
    return query.urlencode()


class AuditLogPage(OrganizationPage):
    action = Action.READ_AUDIT_LOG
    nav = "audit-log"

    def get(self, request):
        filters = AuditLogFilterForm(request.GET or None, actions=audit_actions(self.organization))
        status, page = 200, None
        if filters.is_bound and not filters.is_valid():
            status = 400
        else:
            rows = audit_entries(
                self.organization, **(filters.filters() if filters.is_bound else {})
            )
            page = Paginator(rows, PAGE_SIZE).get_page(request.GET.get("page"))
        return self.page(
            "audit/audit_log.html",
            {
                "filters": filters,
                "filtered": any(request.GET.get(name) for name in filters.fields),
                "page": page,
                "rows": [
                    (entry, details_in_words(entry.details))
                    for entry in (page.object_list if page else [])
                ],
                "query": _query_without_page(request),
            },
            status=status,
        )
