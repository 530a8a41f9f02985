"""The upload the REST API publishes: a .zip of the manifest, with its ``${{ env.NAME }}``
secrets resolved, and the files it names. Pure Python.

Only what the platform reads goes in (the manifest, its code: the ``script`` and the Python
files beside it, ``icon`` and ``previewImages``), taken from the checked manifest, so a
``.env`` or anything else in the folder never leaves the author's machine.
"""

import io
import zipfile
from pathlib import Path

import yaml

from ..manifest import MANIFEST_FILENAME, CheckResult
from ..manifest.yamlload import load_manifest_yaml


def manifest_file(path: Path) -> Path:
    """The manifest file of an integration folder or manifest path, as the checker finds it."""
    return path / MANIFEST_FILENAME if path.is_dir() else path


def resolved_manifest_text(manifest_path: Path, result: CheckResult) -> str:
    """The manifest document with its secrets replaced by their resolved values."""
    document = load_manifest_yaml(manifest_path.read_bytes(), manifest_path.name).document
    if result.manifest.secrets:
        document["secrets"] = dict(result.manifest.secrets)
    return yaml.safe_dump(document, sort_keys=False, allow_unicode=True)


def integration_bundle(path: Path, result: CheckResult) -> bytes:
    """A zip of the integration checked at ``path`` (``result`` must hold no error)."""
    manifest = result.manifest
    assets = [manifest.icon, *manifest.preview_images]
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        archive.writestr(MANIFEST_FILENAME, resolved_manifest_text(manifest_file(path), result))
        for asset in assets:
            if asset is not None:
                archive.writestr(asset.path, asset.content)
        for module_path, source in (manifest.code.files if manifest.code else {}).items():
            archive.writestr(module_path, source)
    return buffer.getvalue()
