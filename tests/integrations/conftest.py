import io
from pathlib import Path

import pytest
import yaml
from PIL import Image


def png_bytes(width: int = 64, height: int = 64) -> bytes:
    buffer = io.BytesIO()
    Image.new("RGB", (width, height), (10, 120, 200)).save(buffer, format="PNG")
    return buffer.getvalue()


def minimal_manifest(**overrides) -> dict:
    manifest = {
        "name": "hello",
        "title": "Hello",
        "description": "Says hello.",
        "organization": "acme",
        "visibility": "public",
        "scopes": ["space:content:read"],
    }
    manifest.update(overrides)
    return {key: value for key, value in manifest.items() if value is not None}


@pytest.fixture
def write_integration(tmp_path):
    """Write an integration folder: a manifest (dict or text) and extra files."""

    def write(manifest, files=None, folder="integration") -> Path:
        root = tmp_path / folder
        root.mkdir(parents=True, exist_ok=True)
        text = manifest if isinstance(manifest, str) else yaml.safe_dump(manifest, sort_keys=False)
        (root / "service-manifest.yaml").write_text(text)
        for name, content in (files or {}).items():
            path = root / name
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(content if isinstance(content, bytes) else content.encode())
        return root

    return write


@pytest.fixture
def publish(write_integration):
    """Publish an integration through the real publish service; returns the Integration.

    ``publisher`` must be an admin of the manifest's organization.
    """
    from integrations.services import integration_publish

    def publish_(publisher, folder=None, **manifest_fields):
        name = manifest_fields.get("name", "hello")
        root = write_integration(minimal_manifest(**manifest_fields), folder=folder or name)
        return integration_publish(path=root, publisher=publisher).version.integration

    return publish_
