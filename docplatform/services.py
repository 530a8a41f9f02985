"""Writes of the host platform."""

from django.core.exceptions import ValidationError
from django.db import transaction
from django.utils import timezone

from . import events
from .audit.services import audit_record
from .events.publisher import publish
from .models import ApiToken, Page, Site, Space, WorkerPing, hash_token


def api_token_create(
    *, user, name: str, expires_at=None, created_with: ApiToken | None = None
) -> tuple[ApiToken, str]:
    """Create a personal token named ``name``, working until ``expires_at`` (None: until it
    is revoked); returns the row and the token, which is shown once and never stored (only its
    hash). A token made by calling the API with a personal token (``created_with``) never
    outlives that one: it expires when that one does, or sooner."""
    errors = {}
    name = name.strip() if isinstance(name, str) else ""
    max_length = ApiToken._meta.get_field("name").max_length
    if not name:
        errors["name"] = ["give the token a name (what it is for)"]
    elif len(name) > max_length:
        errors["name"] = [f"at most {max_length} characters"]
    limit = created_with.expires_at if created_with is not None else None
    if expires_at is not None and expires_at <= timezone.now():
        errors["expires_at"] = ["must be in the future"]
    elif limit is not None and expires_at is not None and expires_at > limit:
        errors["expires_at"] = [
            f"a token made with a token expires no later than it does ({limit.isoformat()})"
        ]
    if errors:
        raise ValidationError(errors)
    raw = ApiToken.generate()
    with transaction.atomic():
        token = ApiToken.objects.create(
            user=user,
            name=name,
            token_hash=hash_token(raw),
            hint=raw[-6:],
            expires_at=expires_at if expires_at is not None else limit,
        )
        expires = token.expires_at.isoformat() if token.expires_at else None
        audit_record(
            action="token.created",
            actor=user,
            target=token,
            organization="",  # a person's own: every organization of theirs shows it
            details={"name": name, "expiresAt": expires},
        )
    return token, raw


@transaction.atomic
def api_token_revoke(*, token: ApiToken, actor=None) -> ApiToken:
    """The token stops working now (revoking it again changes nothing). ``actor``: who
    revokes it, its owner unless said (an operator in the admin)."""
    if token.revoked_at is None:
        token.revoked_at = timezone.now()
        token.save(update_fields=["revoked_at"])
        audit_record(
            action="token.revoked",
            actor=actor if actor is not None else token.user,
            target=token,
            organization="",
            details={"name": token.name},
        )
    return token


def clean_title(value, *, model) -> str:
    """A title for a row of ``model`` (an organization, a space, a site): text, stripped,
    within its column; else ValidationError naming ``title``."""
    title = value.strip() if isinstance(value, str) else ""
    max_length = model._meta.get_field("title").max_length
    if not title:
        raise ValidationError({"title": ["give it a title"]})
    if len(title) > max_length:
        raise ValidationError({"title": [f"at most {max_length} characters"]})
    return title


#: The task that answers a ping, published by name: the tasks call services, never the reverse.
WORKER_PING_TASK = "docplatform.tasks.answer_worker_ping"


def worker_ping_request() -> WorkerPing:
    """Queue a ping for a worker to answer once the row is committed; raises
    BrokerUnavailable (within the publish bound) when the broker cannot take it."""
    with transaction.atomic():
        ping = WorkerPing.objects.create()
        transaction.on_commit(lambda: publish(WORKER_PING_TASK, args=[ping.pk]))
    return ping


def worker_ping_answer(*, ping_id: int, worker: str) -> None:
    WorkerPing.objects.filter(pk=ping_id, answered_at__isnull=True).update(
        answered_at=timezone.now(), worker=worker
    )


# --- Host actions: each one fires its event in the same transaction ---------------------------


@transaction.atomic
def space_visibility_set(*, space: Space, visibility: str) -> Space:
    """Change a space's visibility; fires ``space_visibility_updated`` when it changed."""
    if visibility not in Space.Visibility.values:
        options = ", ".join(Space.Visibility.values)
        raise ValidationError({"visibility": [f"must be one of {options}"]})
    previous = space.visibility
    if previous == visibility:
        return space
    space.visibility = visibility
    space.save(update_fields=["visibility"])
    events.fire(
        "space_visibility_updated",
        organization=space.organization,
        space=space,
        spaceId=space.id,
        previousVisibility=previous,
        visibility=visibility,
    )
    return space


@transaction.atomic
def space_view_record(*, space: Space, visitor: events.Visitor) -> None:
    events.fire(
        "space_view",
        organization=space.organization,
        space=space,
        spaceId=space.id,
        visitor=visitor.as_payload(),
    )


@transaction.atomic
def site_view_record(*, site: Site, visitor: events.Visitor, url: str, referrer: str) -> None:
    """Write ``site_view``. A visit goes through ``sites.services.site_view_record_once``,
    which decides whether it is one (the site's address, once per visitor and page a minute)."""
    events.fire(
        "site_view",
        organization=site.organization,
        site=site,
        siteId=site.id,
        visitor=visitor.as_payload(),
        url=url,
        referrer=referrer,
    )


@transaction.atomic
def page_feedback_record(
    *,
    site: Site,
    page: Page,
    rating: str,
    comment: str,
    visitor: events.Visitor,
    url: str,
    referrer: str,
) -> None:
    """Write ``page_feedback`` about a page of a space the site publishes. A visitor's rating
    goes through ``sites.services.page_feedback_give`` (its rules, one rating per visitor)."""
    if rating not in events.FEEDBACK_RATINGS:
        raise ValidationError({"rating": [f"must be one of {', '.join(events.FEEDBACK_RATINGS)}"]})
    space = page.space
    if not site.spaces.filter(pk=space.pk).exists():
        raise ValidationError({"pageId": ["the page is not on this site"]})
    events.fire(
        "page_feedback",
        organization=site.organization,
        site=site,
        siteId=site.id,
        spaceId=space.id,
        pageId=page.id,
        feedback={"rating": rating, "comment": comment},
        visitor=visitor.as_payload(),
        url=url,
        referrer=referrer,
    )
