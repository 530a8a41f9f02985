"""Releases: which version every installation runs (``Integration.released_version``, set by
``publish`` and by ``rollback``), which development installations run
(``Integration.development_version``, set by ``dev``), marking installations as development,
and pruning the development channel. The rule of which version runs for an installation is
``policies.running_version``."""

from dataclasses import dataclass, field

from django.conf import settings
from django.core.exceptions import PermissionDenied, ValidationError
from django.db import transaction

from docplatform.access import Action, refusal

from ..models import Installation, Integration, IntegrationVersion
from ..policies import act_check, may_act, shared_version_of
from .consent import installation_scopes_narrow
from .installations import installations_revalidate

#: The integration's fields that follow its released version's manifest.
LISTING_FIELDS = (
    "title",
    "description",
    "summary",
    "visibility",
    "target",
    "scopes",
    "categories",
    "blocks",
    "external_links",
    "configurations",
)


def listing_copy(integration: Integration, listing: dict) -> None:
    for name in LISTING_FIELDS:
        if name in listing:
            setattr(integration, name, listing[name])


def version_release(integration: Integration, version: IntegrationVersion) -> list[Installation]:
    """Make ``version`` what every installation runs, in the caller's transaction with the
    integration locked: the listing follows its manifest, development installations run it
    too until ``dev`` publishes again, and every installation is checked against it as at a
    publish (fewer scopes narrow the grants at once, more wait for an admin's approval; the
    configuration is validated again). Other organizations are offered the newest version
    cleared for them (``policies.shared_version_of``): this one unless it awaits review.
    Returns the installations that changed."""
    listing_copy(integration, version.listing)
    integration.released_version = version
    integration.development_version = None
    integration.shared_version = shared_version_of(integration)
    integration.save()
    installation_scopes_narrow(integration=integration)
    return installations_revalidate(integration=integration)


def shared_version_refresh(integration: Integration) -> bool:
    """After a review's decision, in the caller's transaction with the integration locked:
    offer other organizations the newest version cleared for them, and narrow their
    installations' grants to it. Returns whether the shared version changed."""
    shared = shared_version_of(integration)
    if shared == integration.shared_version:
        return False
    integration.shared_version = shared
    integration.save(update_fields=["shared_version", "updated_at"])
    installation_scopes_narrow(integration=integration)
    return True


def _require_publisher(user, integration: Integration) -> None:
    """Releasing and choosing development installations publish the integration: its
    organization's admins (a person of another organization who may see it: 403 too)."""
    if not may_act(user, Action.PUBLISH, integration):
        raise PermissionDenied(refusal(Action.PUBLISH))


@dataclass(frozen=True)
class ReleaseResult:
    version: IntegrationVersion
    previous: IntegrationVersion | None
    released: bool
    changed: list[Installation] = field(default_factory=list)


def integration_release(*, user, integration: Integration, number: int) -> ReleaseResult:
    """Release version ``number`` again (``rollback``, the marketplace's "Make current"):
    every installation runs it and is re-validated as at a publish. Admins of the owning
    organization only (PermissionDenied); ValidationError naming ``version`` for a version
    that does not exist or was never released. Releasing the released version changes
    nothing (``released`` False) unless development installations ran another."""
    _require_publisher(user, integration)
    with transaction.atomic():
        integration = Integration.objects.select_for_update(no_key=True).get(pk=integration.pk)
        version = integration.versions.filter(number=number).first()
        if version is None:
            raise ValidationError({"version": [f"{integration.name} has no version {number}"]})
        if version.channel != IntegrationVersion.Channel.RELEASE:
            raise ValidationError(
                {
                    "version": [
                        f"version {number} is a development version: publish its code to release it"
                    ]
                }
            )
        previous = integration.released_version
        if previous == version and integration.development_version_id is None:
            return ReleaseResult(version=version, previous=previous, released=False)
        changed = version_release(integration, version)
    return ReleaseResult(version=version, previous=previous, released=True, changed=changed)


def development_versions_prune(integration: Integration) -> int:
    """Remove the development versions beyond the newest kept ones, never the one
    development installations run (released versions are never pruned). Returns how many."""
    kept = settings.INTEGRATION_DEVELOPMENT_VERSIONS_KEPT
    older = integration.versions.filter(channel=IntegrationVersion.Channel.DEVELOPMENT).order_by(
        "-number"
    )[kept:]
    running = {integration.development_version_id, integration.latest_version_id}
    pruned = [pk for pk in older.values_list("pk", flat=True) if pk not in running]
    IntegrationVersion.objects.filter(pk__in=pruned).delete()
    return len(pruned)


def installation_mark_development(
    *, user, installation: Installation, development: bool
) -> Installation:
    """Mark ``installation`` as running development versions (or not): admins of the
    integration's organization only, for an installation they may configure (an admin of
    the installing organization too)."""
    act_check(user, Action.CONFIGURE, installation)
    _require_publisher(user, installation.integration)
    installation.development = development
    installation.save(update_fields=["development", "updated_at"])
    return installation
