"""Writes of the integrations app: publishing integrations and their versions, and
unpublishing them.

``publish`` releases (the release channel: every installation runs the new version; a
public one is offered to other organizations once reviewed, ``reviews``);
``dev`` publishes on the development channel (development installations only; releasing an
older version again is ``releases.integration_release``). Code identical to a version of the
channel is never a new version: the released one (or the development one) is unchanged, and
an older released version is refused with a pointer to ``rollback``, never switched to
silently.
"""

import hashlib
import hmac
import json
from dataclasses import dataclass
from pathlib import Path

from django.conf import settings
from django.core.exceptions import PermissionDenied, ValidationError
from django.db import DatabaseError, IntegrityError, transaction
from docplatform_sdk import codebundle
from docplatform_sdk.codecheck import check_code, combined, description_from
from docplatform_sdk.manifest import CheckResult, Manifest, check_manifest

from docplatform.access import Action
from docplatform.selectors import organization_by_ref, organization_is_internal

from ..gateway.client import inspect_code
from ..models import Integration, IntegrationAsset, IntegrationVersion
from ..policies import may_act
from .releases import (
    development_versions_prune,
    listing_copy,
    shared_version_refresh,
    version_release,
)
from .reviews import listing_review_open

RELEASE = IntegrationVersion.Channel.RELEASE
DEVELOPMENT = IntegrationVersion.Channel.DEVELOPMENT


class Outcome:
    """What a publish did: a new version, nothing (the same code runs already), or an
    older development version of the same code runs again for development installations."""

    CREATED = "created"
    UNCHANGED = "unchanged"
    REUSED = "reused"
    CHOICES = (CREATED, UNCHANGED, REUSED)


@dataclass(frozen=True)
class PublishResult:
    version: IntegrationVersion
    outcome: str
    warnings: tuple = ()

    @property
    def created(self) -> bool:
        return self.outcome == Outcome.CREATED


def _organization_is_internal_if_reachable(ref: str) -> bool:
    """`check` works offline: without a usable database an organization is not internal."""
    try:
        return organization_is_internal(ref)
    except DatabaseError:
        return False


def manifest_check(path: str | Path, *, env=None) -> CheckResult:
    """The one manifest check of the platform, with organizations looked up in the database."""
    return check_manifest(
        path, env=env, organization_is_internal=_organization_is_internal_if_reachable
    )


def code_checked(result: CheckResult) -> CheckResult:
    """A valid manifest's check with its code's (``docplatform_sdk.codecheck``). The runtime
    host loads the code in its sandbox (never this process); PlatformFault when it cannot."""
    manifest = result.manifest
    description = None
    if manifest.code is not None:
        description = description_from(inspect_code(manifest.code.encode()))
    return combined(result, check_code(manifest, description))


def problems_error(problems) -> ValidationError:
    messages: dict[str, list[str]] = {}
    for problem in problems:
        messages.setdefault(problem.path, []).append(problem.message)
    return ValidationError(messages)


def content_hash(manifest: Manifest) -> str:
    """A digest of everything a version holds. Secrets enter only as a keyed MAC."""
    digest = hashlib.sha256()
    digest.update(json.dumps(manifest.raw, sort_keys=True, default=str).encode())
    if manifest.code is not None:
        digest.update(b"\0code\0" + manifest.code.encode())
    for asset in _assets(manifest):
        digest.update(b"\0asset\0" + asset.path.encode() + b"\0")
        digest.update(asset.content)
    secrets_mac = hmac.new(
        settings.SECRET_KEY.encode(),
        json.dumps(manifest.secrets, sort_keys=True).encode(),
        hashlib.sha256,
    ).digest()
    digest.update(b"\0secrets\0" + secrets_mac)
    return digest.hexdigest()


def _assets(manifest: Manifest):
    if manifest.icon is not None:
        yield manifest.icon
    yield from manifest.preview_images


def integration_publish_folder(
    *, path: str | Path, publisher, env=None, channel: str = RELEASE
) -> PublishResult:
    """Check the manifest at ``path`` (a folder or its manifest file) and publish it
    (``integration_publish``). ``env`` resolves ``${{ env.NAME }}`` secrets (the
    command-line publisher passes its process environment); the REST API passes None, so
    secrets must arrive resolved."""
    _channel_check(channel)
    result = manifest_check(path, env=env)
    if not result.ok:
        raise problems_error(result.errors)
    return integration_publish(
        manifest=result.manifest, publisher=publisher, channel=channel, warnings=result.warnings
    )


def integration_publish(
    *, manifest: Manifest, publisher, channel: str = RELEASE, warnings=()
) -> PublishResult:
    """Publish the checked ``manifest`` as a new version of its integration, on ``channel``
    (the first version of an integration is released, whatever the channel), once its code
    passed its checks; ``warnings`` (the manifest check's) come back with the code's.

    Raises ValidationError (field path -> reasons), PermissionDenied, or PlatformFault when
    the runtime host cannot check the code (nothing is published unchecked).
    """
    _channel_check(channel)
    organization = organization_by_ref(manifest.organization)
    if organization is None:
        raise ValidationError(
            {"organization": [f"no organization has the id or subdomain '{manifest.organization}'"]}
        )
    if not may_act(publisher, Action.PUBLISH, organization):
        raise PermissionDenied(
            f"{publisher.get_username()} is not an admin of organization "
            f"'{organization.subdomain}'; only its admins may publish its integrations"
        )
    result = code_checked(CheckResult(warnings=list(warnings), manifest=manifest))
    if not result.ok:
        raise problems_error(result.errors)
    try:
        with transaction.atomic():
            version, outcome = _publish(
                manifest, organization, publisher, channel, findings=result.warnings
            )
    except IntegrityError as exc:
        # Two publishers raced on a new name or version number: the loser retries nothing.
        raise ValidationError(
            {"name": ["another publish of this integration ran at the same time; try again"]}
        ) from exc
    return PublishResult(version=version, outcome=outcome, warnings=tuple(result.warnings))


def _channel_check(channel: str) -> None:
    if channel not in IntegrationVersion.Channel.values:
        raise ValidationError(
            {"channel": [f"{channel!r} is not a channel: {', '.join(IntegrationVersion.Channel)}"]}
        )


def _publish(
    manifest: Manifest, organization, publisher, channel: str, *, findings=()
) -> tuple[IntegrationVersion, str]:
    # Publishes of one integration in turn; its log lines go on (``installations._locked``).
    integration = (
        Integration.objects.select_for_update(no_key=True).filter(name=manifest.name).first()
    )
    if integration is not None and integration.organization_id != organization.pk:
        raise ValidationError(
            {"name": [f"the name '{manifest.name}' belongs to another organization's integration"]}
        )
    if integration is None:
        integration = Integration(name=manifest.name, organization=organization)
        listing_copy(integration, listing_of(manifest))
        integration.save()
        channel = RELEASE  # nothing is released yet: the first version is
    digest = content_hash(manifest)
    if channel == DEVELOPMENT:
        same = _development_again(integration, digest)
    else:
        same = _released_again(integration, digest)
    if same is not None:
        return same
    version = _version_create(integration, manifest, publisher, channel=channel, digest=digest)
    integration.latest_version = version
    if channel == RELEASE:
        listing_review_open(version=version, findings=findings)
        version_release(integration, version)
    else:
        integration.development_version = version
        integration.save(update_fields=["latest_version", "development_version", "updated_at"])
        development_versions_prune(integration)
    return version, Outcome.CREATED


class OlderReleaseCode(ValidationError):
    """The code published is an older released version's (``version``): it is refused, and
    ``rollback`` releases that version again."""

    def __init__(self, version: IntegrationVersion):
        super().__init__(
            {
                "version": [
                    f"this code is version {version.number}'s: run `docplatform-integration "
                    f"rollback {version.number}` to make it current again"
                ]
            }
        )
        self.version = version


def _released_again(integration: Integration, digest: str) -> tuple[IntegrationVersion, str] | None:
    """(the released version, unchanged) for its own code; OlderReleaseCode naming the older
    released version whose code it is; None for new code."""
    same = integration.versions.filter(channel=RELEASE, content_hash=digest).first()
    if same is None:
        return None
    if same.pk == integration.released_version_id:
        return same, Outcome.UNCHANGED
    raise OlderReleaseCode(same)


def _development_again(
    integration: Integration, digest: str
) -> tuple[IntegrationVersion, str] | None:
    """For the released version's code, development installations run the released version;
    for an older development version's, that version again; None for new code."""
    released = integration.released_version
    if released is not None and released.content_hash == digest:
        same = released
    else:
        same = integration.versions.filter(channel=DEVELOPMENT, content_hash=digest).first()
        if same is None:
            return None
    running = integration.development_version or released
    if running is not None and running.pk == same.pk:
        return same, Outcome.UNCHANGED
    integration.development_version = None if same == released else same
    integration.save(update_fields=["development_version", "updated_at"])
    return same, Outcome.REUSED


def _version_create(
    integration: Integration, manifest: Manifest, publisher, *, channel: str, digest: str
) -> IntegrationVersion:
    bundle = manifest.code.encode() if manifest.code else None
    last = integration.versions.order_by("-number").values_list("number", flat=True).first()
    version = IntegrationVersion.objects.create(
        integration=integration,
        number=(last or 0) + 1,
        channel=channel,
        listing=listing_of(manifest),
        content_hash=digest,
        manifest=manifest.raw,
        script_path=manifest.code.script if manifest.code else "",
        bundle=bundle,
        bundle_hash=codebundle.digest(bundle) if bundle else "",
        secrets=dict(manifest.secrets),
        published_by=publisher,
    )
    IntegrationAsset.objects.bulk_create(
        IntegrationAsset(
            version=version,
            kind=IntegrationAsset.Kind.ICON
            if asset is manifest.icon
            else IntegrationAsset.Kind.PREVIEW,
            position=position,
            path=asset.path,
            content_type=asset.content_type,
            content=asset.content,
            width=asset.width,
            height=asset.height,
        )
        for position, asset in enumerate(_assets(manifest))
    )
    return version


def listing_of(manifest: Manifest) -> dict:
    """The integration's listing fields as ``manifest`` has them (``releases.LISTING_FIELDS``)."""
    return {
        "title": manifest.title,
        "description": manifest.description,
        "summary": manifest.summary,
        "visibility": manifest.visibility,
        "target": manifest.target,
        "scopes": list(manifest.scopes),
        "categories": list(manifest.categories),
        "blocks": [dict(block) for block in manifest.blocks],
        "external_links": [dict(link) for link in manifest.external_links],
        "configurations": manifest.configurations,
    }


# --- Unpublishing ---------------------------------------------------------------------------

#: How many installations a refusal names (then "and N more").
MAX_INSTALLATIONS_NAMED = 20


def _installations_named(integration: Integration) -> list[str]:
    """Each installation of ``integration`` as ``ID (organization, level)``."""
    installations = integration.installations.select_related("organization").order_by("pk")
    shown = [
        f"{row.id} ({row.organization.subdomain}, {row.level})"
        for row in installations[:MAX_INSTALLATIONS_NAMED]
    ]
    more = installations.count() - len(shown) if len(shown) == MAX_INSTALLATIONS_NAMED else 0
    return [*shown, f"and {more} more"] if more else shown


def integration_version_unpublish(*, integration: Integration, number: int) -> None:
    """Remove one version. The versions installations run (the released one, and the
    development one) stay while any installation exists; the only version goes with the
    whole integration. Raises ValidationError naming ``version``."""
    with transaction.atomic():
        integration = Integration.objects.select_for_update().get(pk=integration.pk)
        version = integration.versions.filter(number=number).first()
        if version is None:
            raise ValidationError({"version": [f"{integration.name} has no version {number}"]})
        running = {
            integration.released_version_id,
            integration.development_version_id,
            integration.shared_version_id,
        }
        installed = _installations_named(integration)
        if version.pk in running and installed:
            raise ValidationError(
                {
                    "version": [
                        f"version {number} is one installations run: {', '.join(installed)}; "
                        "publish a newer version or uninstall them first"
                    ]
                }
            )
        remaining = integration.versions.exclude(pk=version.pk).order_by("-number")
        if not remaining.exists():
            raise ValidationError(
                {"version": [f"version {number} is the only one: unpublish {integration.name}"]}
            )
        if integration.latest_version_id == version.pk:
            integration.latest_version = remaining.first()
        if integration.development_version_id == version.pk:
            integration.development_version = None
        integration.save(update_fields=["latest_version", "development_version", "updated_at"])
        if integration.released_version_id == version.pk:  # nothing is installed
            version_release(integration, remaining.filter(channel=RELEASE).first() or remaining[0])
        version.delete()
        integration.refresh_from_db()
        shared_version_refresh(integration)


def integration_unpublish(*, integration: Integration) -> None:
    """Remove the integration and every version; refused (ValidationError naming
    ``integration``) while anything is installed, with the installations named."""
    with transaction.atomic():
        integration = Integration.objects.select_for_update().get(pk=integration.pk)
        installed = _installations_named(integration)
        if installed:
            raise ValidationError(
                {
                    "integration": [
                        f"{integration.name} is installed: {', '.join(installed)}; "
                        "uninstall it first"
                    ]
                }
            )
        integration.latest_version = None
        integration.released_version = None
        integration.development_version = None
        integration.shared_version = None
        integration.save(
            update_fields=[
                "latest_version",
                "released_version",
                "development_version",
                "shared_version",
            ]
        )
        integration.delete()
