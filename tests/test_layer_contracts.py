"""`make lint`'s layer contracts (import-linter, ``pyproject.toml``) on a scratch copy of the
project: the copy as it is keeps every contract; one import that climbs a layer inside an app
or a feature (a selector importing an API module or a view), that joins two of docplatform's
features, or that reaches the runtime host from the platform side breaks the contract that
says so."""

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
LINT_IMPORTS = Path(sys.executable).with_name("lint-imports")
APPS = ("docplatform", "integrations", "webhooks", "marketplace")

pytestmark = pytest.mark.slow


@pytest.fixture
def scratch(tmp_path) -> Path:
    for app in APPS:
        shutil.copytree(REPO / app, tmp_path / app, ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copytree(
        REPO / "sdk" / "docplatform_sdk",
        tmp_path / "sdk" / "docplatform_sdk",
        ignore=shutil.ignore_patterns("__pycache__"),
    )
    shutil.copy(REPO / "pyproject.toml", tmp_path / "pyproject.toml")
    return tmp_path


def lint_imports(root: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": f"{root}{os.pathsep}{root / 'sdk'}"}
    return subprocess.run(
        [str(LINT_IMPORTS), "--no-cache"],
        cwd=root,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


def append(path: Path, line: str) -> None:
    path.write_text(path.read_text() + f"\n{line}\n")


def test_the_project_keeps_its_contracts_and_a_climbing_import_breaks_one(scratch):
    kept = lint_imports(scratch)
    assert kept.returncode == 0, kept.stdout + kept.stderr

    append(scratch / "integrations" / "selectors.py", "from .api import installations  # noqa")
    append(scratch / "webhooks" / "models.py", "from .services import delivery  # noqa")
    append(scratch / "docplatform" / "sites" / "selectors.py", "from ..documents import selectors")
    append(scratch / "docplatform" / "documents" / "selectors.py", "from . import views  # noqa")
    append(scratch / "marketplace" / "selectors.py", "from . import views  # noqa")
    append(scratch / "webhooks" / "api.py", "from integrations.runtime import pool  # noqa")
    broken = lint_imports(scratch)
    assert broken.returncode == 1, broken.stdout
    named = broken.stdout.split("Broken contracts", 1)[1]
    contracts = (
        "integrations: views, APIs and tasks above services",
        "webhooks: API and tasks above services",
        "docplatform: the wiring above independent features",
        "docplatform.documents: views and APIs above services",
        "marketplace: pages above",
        "The platform side never imports the runtime host's own",
    )
    assert f"{len(contracts)} broken." in broken.stdout, broken.stdout
    for contract in contracts:
        assert contract in named, contract
    assert "integrations.selectors -> integrations.api.installations" in named
    assert "webhooks.models -> webhooks.services.delivery" in named
    assert "docplatform.sites.selectors -> docplatform.documents.selectors" in named
