"""Reads of the host platform."""

from datetime import timedelta

from django.db.models import Q, QuerySet
from django.utils import timezone

from . import page_versions
from .events.models import Event
from .kept_reads import KeptReads
from .models import (
    ApiToken,
    Organization,
    Revision,
    Site,
    Space,
    WorkerPing,
    hash_token,
)
from .queries import Prepared, stand_in


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


_TOKEN_HASH = stand_in("token")
_token_queries: dict[str, Prepared] = {}
#: ``last_used_at`` is kept to the minute: a token used again within it writes nothing.
LAST_USED_PRECISION = timedelta(minutes=1)
#: How many personal tokens a process keeps read, with their users.
TOKENS_KEPT = 4096
#: The tokens a process read, with their users, kept while the change feed vouches for them
#: (``docplatform.kept_reads``): a revocation, a user made inactive or deleted (their rows'
#: triggers) is read at the very next request, in every process.
kept_tokens = KeptReads(TOKENS_KEPT)


def api_token_working(raw: str) -> ApiToken | None:
    """The personal token ``raw`` is, with its user, while it works: not revoked, not expired
    (``api_token_status``), and its user active; else None. Records that it was used (to the
    minute). Every API request with a token asks: the token is read by a statement compiled
    once per database, and kept (``kept_tokens``)."""
    now = timezone.now()
    token_hash = hash_token(raw)
    alias = ApiToken.objects.db
    token = kept_tokens.read(token_hash, lambda: _token_read(token_hash), _token_tags, alias=alias)
    if token is None or not token.user.is_active or api_token_status(token, now) != "active":
        return None
    if token.last_used_at is None or now - token.last_used_at >= LAST_USED_PRECISION:
        ApiToken.objects.filter(pk=token.pk).update(last_used_at=now)
    return token


def _token_read(token_hash: str) -> ApiToken | None:
    key = ApiToken.objects.db
    if key not in _token_queries:
        _token_queries[key] = Prepared(
            ApiToken.objects.select_related("user").filter(token_hash=_TOKEN_HASH).order_by()
        )
    found = _token_queries[key].instances({_TOKEN_HASH: token_hash})
    return found[0] if found else None


def _token_tags(token: ApiToken) -> list[str]:
    """The changes that make a kept token stale: its row's, its user's (their triggers)."""
    return [f"apitoken:{token.pk}", f"user:{token.user_id}"]


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
