"""The manifest checker: every rule, every problem reported at once, never an exception.

Decisions (where the specification leaves a choice; the corpus of real manifests informed them):

* ``scopes`` is required but may be an empty list: 12 of the 57 real manifests are
  block-only integrations that need no permission, and forcing them to ask for one would
  grant more than they need.
* Properties need ``type``, ``title`` and ``description``, as the specification says; every
  real manifest already gives all three.
* A property's keys are exactly the specification's: ``type``, ``title``, ``description``,
  ``default``, ``enum``, ``completion_url``, ``button_text``, ``callback_url``. ``enum`` is a
  list of strings (real manifests use nothing else, ``''`` included); ``enum`` and
  ``completion_url`` cannot be combined (the options come from one or the other).
* A block has exactly ``id``, ``title``, ``description``: real manifests also carry
  ``urlUnfurl`` and ``markdown``, features this platform does not have, so they are refused
  like any unknown key rather than silently ignored.
* ``target``, ``envs`` and ``contentSecurityPolicy`` are accepted (DESIGN). ``envs`` maps an
  environment name to overrides of top-level keys; only the key names are checked and the
  values must be plain data; their secrets are never resolved. ``contentSecurityPolicy`` is a
  string, or a mapping of known CSP directive to a string.
* Secrets: with ``env`` given, a value that is exactly ``${{ env.NAME }}`` is resolved, other
  ``${{ ... }}`` expressions (such as 1Password ``op://`` references) are errors and any other
  string is a literal value. With ``env=None`` (the REST API) every ``${{ ... }}`` is an error:
  the client must send resolved values. Secret values never appear in a message.
* ``script`` must be a ``.py`` file that parses (the runtime runs Python); a ``.ts`` script of
  the other platform is refused with that reason.
* A YAML timestamp is read as a string (no field is a date).
* A script without ``network.fetch`` is a warning, not an error: the code may still call the
  platform's API, and the warning says how to declare other hosts (``["*"]`` for any).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from .base import ORGANIZATION_RE, OrganizationCheck, describe, join, one_of
from .blocks import BlockChecks
from .configurations import ConfigurationChecks
from .constants import (
    DEFAULT_TARGET,
    MANIFEST_FILENAME,
    MAX_MANIFEST_BYTES,
    REQUIRED_KEYS,
    TOP_LEVEL_KEYS,
    human_size,
)
from .files import FileChecks
from .identity import IdentityChecks
from .network_csp import NetworkChecks
from .scopes import ScopeChecks
from .secrets import SecretChecks, redact
from .types import CheckResult, Manifest, Problem
from .yamlload import load_manifest_yaml


def _never_internal(_organization: str) -> bool:
    return False


class _Checker(
    IdentityChecks,
    ScopeChecks,
    BlockChecks,
    FileChecks,
    ConfigurationChecks,
    SecretChecks,
    NetworkChecks,
):
    """Every section's checks together; ``check`` dispatches each top-level key to its
    ``check_<key>`` method and ``manifest`` builds the result."""

    def check(self, document: Any) -> None:
        if document is None:
            self.error(
                self.filename,
                f"the manifest is empty; it needs at least {one_of(REQUIRED_KEYS)}",
            )
            return
        if not isinstance(document, dict):
            self.error(
                self.filename,
                f"the manifest must be a mapping of keys to values, found {describe(document)}",
            )
            return
        organization = document.get("organization")
        if isinstance(organization, str) and ORGANIZATION_RE.fullmatch(organization):
            self._organization = organization
        for key, value in document.items():
            if key not in TOP_LEVEL_KEYS:
                self.unknown_key(join("", key), key, TOP_LEVEL_KEYS)
                continue
            result = getattr(self, f"check_{key}")(value, key)
            if result is not None:
                self.values[key] = result
        for key in REQUIRED_KEYS:
            if key not in document:
                self.error(key, "is required")
        self.warn_fetch_undeclared(document)

    def manifest(self, document: dict) -> Manifest:
        values = self.values
        raw = redact(document)
        return Manifest(
            name=values["name"],
            title=values["title"],
            description=values["description"],
            summary=values.get("summary", ""),
            organization=values["organization"],
            visibility=values["visibility"],
            scopes=values["scopes"],
            categories=values.get("categories", ()),
            blocks=values.get("blocks", ()),
            external_links=values.get("externalLinks", ()),
            configurations=values.get("configurations", {}),
            target=values.get("target", DEFAULT_TARGET),
            script=values.get("script"),
            icon=values.get("icon"),
            preview_images=values.get("previewImages", ()),
            secrets=values.get("secrets", {}),
            raw=raw,
            envs=raw.get("envs", {}),
            content_security_policy=values.get("contentSecurityPolicy"),
            code=values.get("code"),
            network_fetch=values["network"]["fetch"] if "network" in values else None,
        )


# --- entry points -----------------------------------------------------------------------------


def manifest_from_text(
    text: bytes | str,
    *,
    root: Path | str | None,
    env: Mapping[str, str] | None = None,
    organization_is_internal: OrganizationCheck = _never_internal,
    filename: str = MANIFEST_FILENAME,
) -> CheckResult:
    """Check manifest text whose files live in ``root``.

    With ``root=None`` every file the manifest names (``script``, ``icon``,
    ``previewImages``) is an error "cannot be checked without the integration folder": a
    manifest is never accepted with files nobody looked at.
    """
    loaded = load_manifest_yaml(text, filename)
    if loaded.errors:
        return CheckResult(errors=loaded.errors)
    checker = _Checker(
        root=Path(root) if root is not None else None,
        env=env,
        organization_is_internal=organization_is_internal,
        filename=filename,
    )
    checker.check(loaded.document)
    result = CheckResult(errors=checker.errors, warnings=checker.warnings)
    if not result.errors:
        result.manifest = checker.manifest(loaded.document)
    return result


def check_manifest(
    path: str | Path,
    *,
    env: Mapping[str, str] | None = None,
    organization_is_internal: OrganizationCheck = _never_internal,
) -> CheckResult:
    """Check an integration: a folder holding ``service-manifest.yaml``, or a manifest file.

    The integration folder (where ``script``, ``icon`` and ``previewImages`` are looked up)
    is the folder of the manifest file. ``env`` gives the values of ``${{ env.NAME }}``
    secrets; ``None`` means "do not interpolate" (the REST API, which takes resolved values).
    ``organization_is_internal`` is asked about the manifest's organization only when it
    requests an internal scope.
    """
    try:
        location = Path(path)
        if location.is_dir():
            manifest_path = location / MANIFEST_FILENAME
            if not manifest_path.exists():
                return CheckResult(
                    errors=[Problem(MANIFEST_FILENAME, f"not found in the folder {location}")]
                )
        elif location.exists():
            manifest_path = location
        else:
            return CheckResult(
                errors=[
                    Problem(location.name or str(location), f"no such file or folder: {location}")
                ]
            )
        filename = manifest_path.name
        if not manifest_path.is_file():
            return CheckResult(errors=[Problem(filename, "is not a regular file")])
        with manifest_path.open("rb") as handle:
            data = handle.read(MAX_MANIFEST_BYTES + 1)
    except (OSError, ValueError) as exc:  # ValueError: a NUL in the path
        reason = getattr(exc, "strerror", None) or str(exc)
        return CheckResult(
            errors=[Problem(Path(str(path)).name or str(path), f"cannot be read: {reason}")]
        )
    if len(data) > MAX_MANIFEST_BYTES:
        size = manifest_path.stat().st_size if manifest_path.exists() else len(data)
        return CheckResult(
            errors=[
                Problem(
                    filename,
                    f"the file is {human_size(size)}; a manifest may be at most "
                    f"{human_size(MAX_MANIFEST_BYTES)}",
                )
            ]
        )
    return manifest_from_text(
        data,
        root=manifest_path.parent,
        env=env,
        organization_is_internal=organization_is_internal,
        filename=filename,
    )
