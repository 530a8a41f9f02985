"""Shared helpers of the manifest checker tests."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import yaml
from docplatform_sdk.manifest import CheckResult, manifest_from_text
from PIL import Image

MINIMAL: dict[str, Any] = {
    "name": "my-integration",
    "title": "My integration",
    "description": "Does useful things.",
    "organization": "acme",
    "visibility": "public",
    "scopes": ["space:content:read"],
}

DELETE = object()


def manifest(**changes: Any) -> dict[str, Any]:
    """MINIMAL with keys replaced (or removed with DELETE)."""
    document = copy.deepcopy(MINIMAL)
    for key, value in changes.items():
        if value is DELETE:
            document.pop(key, None)
        else:
            document[key] = value
    return document


def dump(document: Any) -> str:
    return yaml.safe_dump(document, sort_keys=False, allow_unicode=True)


def check(document: Any, **options: Any) -> CheckResult:
    options.setdefault("root", None)
    return manifest_from_text(dump(document), **options)


def check_text(text: str | bytes, **options: Any) -> CheckResult:
    options.setdefault("root", None)
    return manifest_from_text(text, **options)


def errors(result: CheckResult) -> list[str]:
    return [str(problem) for problem in result.errors]


def warnings(result: CheckResult) -> list[str]:
    return [str(problem) for problem in result.warnings]


def make_image(path: Path, size: tuple[int, int] = (1600, 800), kind: str = "PNG") -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    Image.new("RGB", size, (200, 30, 90)).save(path, kind)
    return path


def write_file(path: Path, content: str | bytes) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(content, str):
        content = content.encode()
    path.write_bytes(content)
    return path


SCRIPT = "from docplatform_sdk import create_integration\n\nintegration = None\n"
