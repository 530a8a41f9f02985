"""``docplatform-integration`` as an author runs it, for the SDK's own tests: the installed
console script with no platform settings, and an integration folder to run it on.

The same helpers as ``tests/integrations/test_code_checks.py`` (``console``, ``write``) and
``tests/integrations/conftest.py`` (``minimal_manifest``), which import the platform."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import yaml

CONSOLE_SCRIPT = Path(sys.executable).with_name("docplatform-integration")
NO_PLATFORM = ("DJANGO_SETTINGS_MODULE", "DATABASE_URL", "DOCPLATFORM_API", "DOCPLATFORM_TOKEN")
MANIFEST = "service-manifest.yaml"


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


def write(root: Path, fields: dict, files: dict) -> Path:
    root.mkdir(parents=True)
    (root / MANIFEST).write_text(yaml.safe_dump(minimal_manifest(**fields), sort_keys=False))
    for name, content in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(content)
    return root


def console(*args: str, **env: str) -> subprocess.CompletedProcess:
    """``docplatform-integration`` in an author's shell: no platform settings at all."""
    base = {name: value for name, value in os.environ.items() if name not in NO_PLATFORM}
    return subprocess.run(
        [str(CONSOLE_SCRIPT), *args],
        capture_output=True,
        text=True,
        env={**base, **env},
        timeout=60,
    )
