"""Writes of the integrations app: publishing integrations and their versions, and
unpublishing them."""

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

from docplatform.selectors import (
    is_organization_admin,
    organization_by_ref,
    organization_is_internal,
)

from ..gateway.client import inspect_code
from ..models import Integration, IntegrationAsset, IntegrationVersion
from ..policies import runnable_version
from .consent import installation_scopes_narrow
from .installations import installations_revalidate


@dataclass(frozen=True)
class PublishResult:
    version: IntegrationVersion
    created: bool
    warnings: tuple = ()


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


def integration_publish(*, path: str | Path, publisher, env=None) -> PublishResult:
    """Check the manifest at ``path`` and publish it as a new version of its integration.

    ``env`` resolves ``${{ env.NAME }}`` secrets (the command-line publisher passes its process
    environment); the REST API passes None, so secrets must arrive resolved.
    Raises ValidationError (field path -> reasons), PermissionDenied, or PlatformFault when
    the runtime host cannot check the code (nothing is published unchecked).
    """
    result = manifest_check(path, env=env)
    if not result.ok:
        raise problems_error(result.errors)
    manifest = result.manifest
    organization = organization_by_ref(manifest.organization)
    if organization is None:
        raise ValidationError(
            {"organization": [f"no organization has the id or subdomain '{manifest.organization}'"]}
        )
    if not is_organization_admin(user=publisher, organization=organization):
        raise PermissionDenied(
            f"{publisher.get_username()} is not an admin of organization "
            f"'{organization.subdomain}'; only its admins may publish its integrations"
        )
    result = code_checked(result)
    if not result.ok:
        raise problems_error(result.errors)
    try:
        with transaction.atomic():
            version, created = _publish(manifest, organization, publisher)
            # Fewer scopes narrow every installation's grant at once (more wait for approval).
            installation_scopes_narrow(integration=version.integration)
            # A changed configuration definition: every installation is validated again.
            installations_revalidate(integration=version.integration)
    except IntegrityError as exc:
        # Two publishers raced on a new name or version number: the loser retries nothing.
        raise ValidationError(
            {"name": ["another publish of this integration ran at the same time; try again"]}
        ) from exc
    return PublishResult(version=version, created=created, warnings=tuple(result.warnings))


def _publish(manifest: Manifest, organization, publisher) -> tuple[IntegrationVersion, bool]:
    integration = Integration.objects.select_for_update().filter(name=manifest.name).first()
    if integration is not None and integration.organization_id != organization.pk:
        raise ValidationError(
            {"name": [f"the name '{manifest.name}' belongs to another organization's integration"]}
        )
    if integration is None:
        integration = Integration(name=manifest.name, organization=organization)

    digest = content_hash(manifest)
    existing = integration.versions.filter(content_hash=digest).first() if integration.pk else None
    _copy_listing(integration, manifest)
    if existing is not None:
        integration.latest_version = existing
        integration.save()
        return existing, False

    integration.save()
    bundle = manifest.code.encode() if manifest.code else None
    last = integration.versions.order_by("-number").values_list("number", flat=True).first()
    version = IntegrationVersion.objects.create(
        integration=integration,
        number=(last or 0) + 1,
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
    integration.latest_version = version
    integration.save(update_fields=["latest_version", "updated_at"])
    return version, True


def _copy_listing(integration: Integration, manifest: Manifest) -> None:
    integration.title = manifest.title
    integration.description = manifest.description
    integration.summary = manifest.summary
    integration.visibility = manifest.visibility
    integration.target = manifest.target
    integration.scopes = list(manifest.scopes)
    integration.categories = list(manifest.categories)
    integration.blocks = [dict(block) for block in manifest.blocks]
    integration.external_links = [dict(link) for link in manifest.external_links]
    integration.configurations = manifest.configurations


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
    """Remove one version. The version installations run (``runnable_version``: the latest)
    stays while any installation exists; the only version goes with the whole integration.
    Raises ValidationError naming ``version``."""
    with transaction.atomic():
        integration = Integration.objects.select_for_update().get(pk=integration.pk)
        version = integration.versions.filter(number=number).first()
        if version is None:
            raise ValidationError({"version": [f"{integration.name} has no version {number}"]})
        running = runnable_version(integration) or integration.latest_version
        installed = _installations_named(integration)
        if running is not None and running.pk == version.pk and installed:
            raise ValidationError(
                {
                    "version": [
                        f"version {number} is the one installations run: "
                        f"{', '.join(installed)}; publish a newer version or uninstall them first"
                    ]
                }
            )
        previous = integration.versions.exclude(pk=version.pk).order_by("-number").first()
        if previous is None:
            raise ValidationError(
                {"version": [f"version {number} is the only one: unpublish {integration.name}"]}
            )
        if integration.latest_version_id == version.pk:
            integration.latest_version = previous
            integration.save(update_fields=["latest_version", "updated_at"])
        version.delete()


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
        integration.save(update_fields=["latest_version"])
        integration.delete()
