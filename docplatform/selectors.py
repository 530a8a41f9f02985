"""Reads of the host platform."""

from django.db.models import Q
from django.utils import timezone

from .models import ApiToken, Membership, Organization, hash_token


def organization_by_ref(ref: str) -> Organization | None:
    """The organization a manifest names, by id or by subdomain."""
    if not isinstance(ref, str) or not ref:
        return None
    return Organization.objects.filter(Q(id=ref) | Q(subdomain=ref)).first()


def organization_is_internal(ref: str) -> bool:
    organization = organization_by_ref(ref)
    return bool(organization and organization.internal)


def is_organization_admin(*, user, organization: Organization) -> bool:
    return Membership.objects.filter(
        user=user, organization=organization, role=Membership.Role.ADMIN
    ).exists()


def api_token_user(raw: str):
    """The user a personal token acts as, or None for an unknown or revoked token."""
    token = (
        ApiToken.objects.select_related("user")
        .filter(token_hash=hash_token(raw), revoked_at__isnull=True)
        .first()
    )
    if token is None or not token.user.is_active:
        return None
    ApiToken.objects.filter(pk=token.pk).update(last_used_at=timezone.now())
    return token.user
