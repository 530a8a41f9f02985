"""Reads of the host platform."""

from datetime import timedelta

from django.db.models import Q, QuerySet
from django.utils import timezone

from . import page_versions
from .events.models import Event
from .models import (
    ApiToken,
    Organization,
    Revision,
    Site,
    Space,
    WorkerPing,
    hash_token,
)
from .queries import Prepared, stand_in, stand_in_time


def organization_by_ref(ref: str) -> Organization | None:
    """The organization a manifest names, by id or by subdomain."""
    if not isinstance(ref, str) or not ref:
        return None
    return Organization.objects.filter(Q(id=ref) | Q(subdomain=ref)).first()


def organization_is_internal(ref: str) -> bool:
    organization = organization_by_ref(ref)
    return bool(organization and organization.internal)


def organization_events(organization: Organization, *, event_type: str | None = None):
    events = Event.objects.filter(organization=organization)
    if event_type:
        events = events.filter(type=event_type)
    return events


def _working_tokens(now) -> QuerySet:
    return ApiToken.objects.filter(revoked_at__isnull=True).filter(
        Q(expires_at__isnull=True) | Q(expires_at__gt=now)
    )


_TOKEN_HASH, _NOW = stand_in("token"), stand_in_time(1)
_token_queries: dict[str, Prepared] = {}
#: ``last_used_at`` is kept to the minute: a token used again within it writes nothing.
LAST_USED_PRECISION = timedelta(minutes=1)


def api_token_working(raw: str) -> ApiToken | None:
    """The personal token ``raw`` is, with its user, while it works: not revoked, not expired,
    and its user active; else None. Records that it was used (to the minute). Compiled once
    per database: every API request with a token asks."""
    now = timezone.now()
    key = ApiToken.objects.db
    if key not in _token_queries:
        _token_queries[key] = Prepared(
            _working_tokens(_NOW).select_related("user").filter(token_hash=_TOKEN_HASH).order_by()
        )
    found = _token_queries[key].instances({_TOKEN_HASH: hash_token(raw), _NOW: now})
    token = found[0] if found else None
    if token is None or not token.user.is_active:
        return None
    if token.last_used_at is None or now - token.last_used_at >= LAST_USED_PRECISION:
        ApiToken.objects.filter(pk=token.pk).update(last_used_at=now)
    return token


def api_token_user(raw: str):
    """The user a personal token acts as, or None for an unknown, revoked or expired token."""
    token = api_token_working(raw)
    return token.user if token is not None else None


def api_tokens_of(user) -> QuerySet:
    """The user's personal tokens, newest first: working, expired and revoked ones."""
    return ApiToken.objects.filter(user=user).order_by("-created_at", "-id")


def api_token_of(user, token_id) -> ApiToken | None:
    """One of the user's personal tokens; None for anyone else's."""
    return api_tokens_of(user).filter(pk=token_id).first()


def api_token_status(token: ApiToken, now=None) -> str:
    """``revoked``, ``expired`` or ``active``."""
    if token.revoked_at is not None:
        return "revoked"
    if token.expires_at is not None and token.expires_at <= (now or timezone.now()):
        return "expired"
    return "active"


def worker_ping_answered(ping_id: int) -> WorkerPing | None:
    """The ping, once a worker has answered it (``manage.py worker_ping``); else None."""
    return WorkerPing.objects.filter(pk=ping_id, answered_at__isnull=False).first()


# --- What the API lists --------------------------------------------------------------------


def organization_spaces(organization: Organization) -> QuerySet:
    return Space.objects.filter(organization=organization)


def organization_sites(organization: Organization) -> QuerySet:
    """The organization's sites, with the spaces each publishes (``placements``, in the
    site's order)."""
    return Site.objects.filter(organization=organization).prefetch_related("placements")


def space_revisions(space: Space) -> QuerySet:
    """The space's revisions, with their authors."""
    return space.revisions.select_related("author")


def current_pages(space: Space) -> QuerySet:
    """The pages of the space's current revision."""
    return page_versions.current_pages([space.pk])


def revisions_of(spaces: QuerySet) -> QuerySet:
    """The revisions of these spaces."""
    return Revision.objects.filter(space__in=spaces)
