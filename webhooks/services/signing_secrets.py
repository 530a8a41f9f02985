"""The webhook installations' signing secrets: the current one, made on first use, and the
previous ones, which keep signing for 24 hours after a rotation."""

from collections import defaultdict
from datetime import timedelta

from django.db import transaction
from django.utils import timezone

from integrations.models import Installation

from ..models import SigningSecret, new_signing_secret

ROTATION_OVERLAP = timedelta(hours=24)


def signing_secrets_for(installations: list[Installation]) -> dict[str, list[str]]:
    """The secrets that sign now, by installation: the current one first (made on first use),
    then any still in its overlap. One query for all."""
    by_id = {installation.pk: installation for installation in installations}
    current, overlapping = {}, defaultdict(list)
    rows = (
        SigningSecret.objects.filter(installation_id__in=by_id)
        .exclude(expires_at__lte=timezone.now())
        .order_by("expires_at", "-created_at")
    )
    for row in rows:
        if row.expires_at is None:
            current[row.installation_id] = row.secret
        else:
            overlapping[row.installation_id].append(row.secret)
    return {
        pk: [current.get(pk) or signing_secret_current(installation), *overlapping[pk]]
        for pk, installation in by_id.items()
    }


@transaction.atomic
def signing_secret_current(installation: Installation) -> str:
    """The installation's current signing secret, made on first use."""
    Installation.objects.select_for_update(of=("self",)).filter(pk=installation.pk).first()
    row = SigningSecret.objects.filter(installation=installation, expires_at__isnull=True).first()
    if row is None:
        row = SigningSecret.objects.create(installation=installation, secret=new_signing_secret())
    return row.secret


@transaction.atomic
def signing_secret_rotate(installation: Installation) -> str:
    """Make a new current secret; the old one keeps signing for 24 hours."""
    Installation.objects.select_for_update(of=("self",)).filter(pk=installation.pk).first()
    now = timezone.now()
    SigningSecret.objects.filter(installation=installation, expires_at__isnull=True).update(
        expires_at=now + ROTATION_OVERLAP
    )
    return SigningSecret.objects.create(
        installation=installation, secret=new_signing_secret(), created_at=now
    ).secret
