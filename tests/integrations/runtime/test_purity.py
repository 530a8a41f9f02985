"""The SDK and the runtime host are pure Python: importing all of either loads neither
Django nor the platform (checked in a fresh interpreter, where nothing else imported them);
and the SDK installs on its own into an empty virtual environment."""

import json
import shutil
import subprocess
import sys
import venv

import pytest

from .support import PROJECT_ROOT

CHECK = """
import importlib, json, pkgutil, sys
package = importlib.import_module(sys.argv[1])
for module in pkgutil.walk_packages(package.__path__, package.__name__ + "."):
    importlib.import_module(module.name)
platform = ("django", "docplatform", "webhooks", "marketplace", "rest_framework", "celery")
loaded = sorted(
    name for name in sys.modules
    if name.split(".")[0] in platform
    or (name.startswith("integrations.") and not name.startswith("integrations.runtime"))
    or (name.startswith("integrations") and sys.argv[1] == "docplatform_sdk")
)
print(json.dumps(loaded))
"""


@pytest.mark.parametrize("package", ["docplatform_sdk", "integrations.runtime"])
def test_the_package_imports_nothing_of_django_or_the_platform(package):
    result = subprocess.run(
        [sys.executable, "-c", CHECK, package],
        cwd=PROJECT_ROOT,
        env={"PATH": "/usr/bin:/bin"},
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    assert json.loads(result.stdout) == []


def package_index_answers(tmp_path) -> bool:
    """Whether pip, as configured here (its index, extra indexes, find-links), gets the SDK's
    build requirement within a few seconds: no index, no install to test."""
    probe = subprocess.run(
        [sys.executable, "-m", "pip", "download", "--no-deps", "--quiet", "--retries", "0",
         "--timeout", "5", "--dest", str(tmp_path / "probe"), "setuptools>=69"],
        capture_output=True,
        timeout=60,
    )  # fmt: skip
    return probe.returncode == 0


@pytest.mark.slow
def test_the_sdk_installs_alone_and_its_command_works(tmp_path):
    """Needs a package index (the SDK's dependencies are installed from it): skipped when
    pip's configured index does not answer."""
    if not package_index_answers(tmp_path):
        pytest.skip("needs a package index: pip's configured index did not answer")
    environment = tmp_path / "venv"
    venv.create(environment, with_pip=True)
    python = environment / "bin" / "python"
    source = tmp_path / "sdk"  # a copy: pip builds in the source folder
    shutil.copytree(
        PROJECT_ROOT / "sdk", source, ignore=shutil.ignore_patterns("build", "*.egg-info")
    )
    subprocess.run(
        [python, "-m", "pip", "install", "--quiet", str(source)],
        check=True,
        capture_output=True,
        timeout=600,
    )
    imported = subprocess.run(
        [python, "-c", "import sys, docplatform_sdk; print(sorted(sys.modules))"],
        capture_output=True,
        text=True,
        check=True,
        cwd=tmp_path,
        timeout=60,
    )
    modules = set(eval(imported.stdout))  # noqa: S307 - our own printed list
    assert "django" not in modules and "docplatform" not in modules
    command = environment / "bin" / "docplatform-integration"
    new = subprocess.run(
        [command, "new", str(tmp_path / "hello"), "--organization", "acme"],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=60,
    )
    assert new.returncode == 0, new.stdout + new.stderr
    check = subprocess.run(
        [command, "check", str(tmp_path / "hello")],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=60,
    )
    assert check.returncode == 0, check.stdout + check.stderr
    assert "valid" in check.stdout
    django = subprocess.run(
        [python, "-c", "import django"], capture_output=True, text=True, cwd=tmp_path, timeout=60
    )
    assert django.returncode != 0  # nothing of the platform came along
