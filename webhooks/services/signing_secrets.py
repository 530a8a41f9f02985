"""The webhook installations' signing secrets: the current one, made on first use, and the
previous ones, which keep signing for 24 hours after a rotation; an admin reads and rotates
them (``webhook_secret_read``, ``webhook_secret_rotate``: the audit log records who rotated
it, never the secret)."""

from collections import defaultdict
from datetime import timedelta

from django.db import transaction
from django.db.models.functions import Now
from django.utils import timezone

from docplatform.access import Action
from docplatform.queries import Prepared, stand_in_values, stand_ins
from integrations.models import Installation
from integrations.policies import act_check
from integrations.services.audit import installation_audit

from ..models import SigningSecret, new_signing_secret
from ..transport.signatures import secret_shown
from .checks import webhook_installation_check

ROTATION_OVERLAP = timedelta(hours=24)


def signing_secrets_for(installations: list[Installation]) -> dict[str, list[str]]:
    """The secrets that sign now, by installation: the current one first (made on first use),
    then any still in its overlap. One query for all, compiled once (a drain runs it before
    its first POST: building it took longer than running it)."""
    by_id = {installation.pk: installation for installation in installations}
    if not by_id:
        return {}
    current, overlapping = {}, defaultdict(list)
    ids = stand_in_values("installation", [*by_id])
    for installation_id, expires_at, secret in _secrets_query(len(by_id)).rows(ids):
        if expires_at is None:
            current[installation_id] = secret
        else:
            overlapping[installation_id].append(secret)
    return {
        pk: [current.get(pk) or signing_secret_current(installation), *overlapping[pk]]
        for pk, installation in by_id.items()
    }


_secrets_queries: dict[tuple[str, int], Prepared] = {}


def _secrets_query(count: int) -> Prepared:
    """The secrets not expired of ``count`` installations (``stand_ins("installation")``), the
    current one (no expiry) first, then the newest: (installation id, expires at, secret)
    rows. Expiry is checked on the database's clock (an overlap lasts 24 hours)."""
    key = (SigningSecret.objects.db, count)
    if key not in _secrets_queries:
        _secrets_queries[key] = Prepared(
            SigningSecret.objects.filter(installation_id__in=stand_ins("installation", count))
            .exclude(expires_at__lte=Now())
            .order_by("expires_at", "-created_at")
            .values_list("installation_id", "expires_at", "secret")
        )
    return _secrets_queries[key]


@transaction.atomic
def signing_secret_current(installation: Installation) -> str:
    """The installation's current signing secret, made on first use."""
    Installation.objects.select_for_update(of=("self",), no_key=True).filter(
        pk=installation.pk
    ).first()
    row = SigningSecret.objects.filter(installation=installation, expires_at__isnull=True).first()
    if row is None:
        row = SigningSecret.objects.create(installation=installation, secret=new_signing_secret())
    return row.secret


@transaction.atomic
def signing_secret_rotate(installation: Installation) -> str:
    """Make a new current secret; the old one keeps signing for 24 hours."""
    Installation.objects.select_for_update(of=("self",), no_key=True).filter(
        pk=installation.pk
    ).first()
    now = timezone.now()
    SigningSecret.objects.filter(installation=installation, expires_at__isnull=True).update(
        expires_at=now + ROTATION_OVERLAP
    )
    return SigningSecret.objects.create(
        installation=installation, secret=new_signing_secret(), created_at=now
    ).secret


def webhook_secret_read(*, user, installation: Installation) -> str:
    """The current signing secret, for an admin of the installing organization, in the form
    its endpoint's signature scheme takes (``signatures.secret_shown``)."""
    act_check(user, Action.ROTATE_SECRET, installation)
    webhook_installation_check(installation)
    return secret_shown(installation.configuration, signing_secret_current(installation))


@transaction.atomic
def webhook_secret_rotate(*, user, installation: Installation) -> str:
    """A new signing secret, for an admin (or an operator), shown as ``webhook_secret_read``
    shows it; the old one keeps signing for 24 hours."""
    act_check(user, Action.ROTATE_SECRET, installation)
    webhook_installation_check(installation)
    secret = signing_secret_rotate(installation)
    installation_audit(action="webhook.secret_rotated", user=user, installation=installation)
    return secret_shown(installation.configuration, secret)
