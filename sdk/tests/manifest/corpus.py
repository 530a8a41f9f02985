"""The real-world corpus: where it is and how each file is checked.

Each corpus file is a bare manifest (its folder has none of its assets). It is copied alone
into an empty folder as ``service-manifest.yaml`` and checked as the command-line ``check``
would with an empty environment and an organization that is not internal.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

from docplatform_sdk.manifest import MANIFEST_FILENAME, check_manifest

REPO_ROOT = Path(__file__).resolve().parents[3]
CORPUS = REPO_ROOT.parent / "shared" / "corpus" / "gitbook-manifests"
EXPECTED = Path(__file__).with_name("corpus_expected.json")


def corpus_files() -> list[Path]:
    return sorted(CORPUS.glob("*.yaml")) if CORPUS.is_dir() else []


def outcome(manifest_file: Path, folder: Path) -> dict[str, Any]:
    folder.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(manifest_file, folder / MANIFEST_FILENAME)
    result = check_manifest(folder, env={})
    return {
        "accepted": result.ok,
        "errors": [str(problem) for problem in result.errors],
        "warnings": [str(problem) for problem in result.warnings],
    }


def load_expected() -> dict[str, dict[str, Any]]:
    return json.loads(EXPECTED.read_text(encoding="utf-8"))
