"""Writes of the host platform."""

from django.db import transaction
from django.utils import timezone

from .models import ApiToken, Membership, Organization, WorkerPing, hash_token


def api_token_create(*, user, name: str) -> tuple[ApiToken, str]:
    """Create a personal token; returns the row and the token, which is never shown again."""
    raw = ApiToken.generate()
    token = ApiToken.objects.create(user=user, name=name, token_hash=hash_token(raw), hint=raw[-6:])
    return token, raw


def api_token_revoke(*, token: ApiToken) -> None:
    token.revoked_at = timezone.now()
    token.save(update_fields=["revoked_at"])


def organization_create(*, subdomain: str, title: str, admin=None) -> Organization:
    organization = Organization(subdomain=subdomain, title=title)
    organization.full_clean()
    organization.save()
    if admin is not None:
        Membership.objects.create(organization=organization, user=admin, role=Membership.Role.ADMIN)
    return organization


def worker_ping_request() -> WorkerPing:
    """Queue a ping for a worker to answer once the row is committed."""
    from .tasks import answer_worker_ping

    with transaction.atomic():
        ping = WorkerPing.objects.create()
        transaction.on_commit(lambda: answer_worker_ping.delay(ping.pk))
    return ping


def worker_ping_answer(*, ping_id: int, worker: str) -> None:
    WorkerPing.objects.filter(pk=ping_id, answered_at__isnull=True).update(
        answered_at=timezone.now(), worker=worker
    )
