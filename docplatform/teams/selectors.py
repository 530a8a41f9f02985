"""Reads of invitations. An organization's people themselves are read by ``docplatform.access``
(the one reader of memberships)."""

from django.db.models import QuerySet
from django.utils import timezone

from .models import Invitation


def invitations_open(organization) -> QuerySet:
    """The organization's invitations whose link still works, newest first."""
    return Invitation.objects.filter(
        organization=organization,
        accepted_at__isnull=True,
        revoked_at__isnull=True,
        expires_at__gt=timezone.now(),
    ).select_related("invited_by")


def invitation_of(organization, invitation_id: str) -> Invitation | None:
    """One of the organization's invitations, whatever its state."""
    return Invitation.objects.filter(organization=organization, pk=invitation_id).first()


def invitation_by_token(token: str) -> Invitation | None:
    """The invitation a link's token opens, whatever its state; None for a token no
    invitation has (only the tokens' hashes are stored)."""
    return (
        Invitation.objects.select_related("organization", "invited_by")
        .filter(token_hash=Invitation.hash_token(token))
        .first()
    )


def invitations_to(organization, email: str) -> QuerySet:
    """Every invitation of the organization to ``email``, whatever its state."""
    return Invitation.objects.filter(organization=organization, email__iexact=email)
