"""The newcomer's path in a new virtual environment with only the SDK (and pytest) installed:
``docplatform-integration new``, its test passes with ``pytest``, ``check`` accepts it.

No package index is used (CI may have none): the SDK is built from this checkout with this
environment's setuptools, and pip installs it and its declared dependencies with
``--no-index`` from wheels of what this environment has installed. A dependency the SDK uses
but does not declare is therefore missing there, and the test fails.
"""

import base64
import hashlib
import os
import re
import shutil
import subprocess
import sys
import time
import tomllib
import venv
import zipfile
from importlib import metadata
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name
from packaging.version import Version

#: The SDK's source: the folder above these tests.
SDK_SOURCE = Path(__file__).resolve().parents[1]
#: Written by pip at install time, not part of a wheel.
INSTALL_RECORDS = {"INSTALLER", "REQUESTED", "RECORD", "direct_url.json"}


def setuptools_builds_wheels() -> bool:
    """Whether this environment's setuptools builds a wheel on its own (70.1 has
    ``bdist_wheel`` built in; before it, the ``wheel`` package was needed)."""
    try:
        return Version(metadata.version("setuptools")) >= Version("70.1")
    except metadata.PackageNotFoundError:
        return False


def installed_closure(requirements: list[str]) -> list[metadata.Distribution]:
    """The distributions installed here that ``requirements`` need, with what they need in
    turn (markers evaluated for this interpreter, no extras)."""
    found: dict[str, metadata.Distribution] = {}
    pending = list(requirements)
    while pending:
        requirement = Requirement(pending.pop())
        name = canonicalize_name(requirement.name)
        if name in found or not (
            requirement.marker is None or requirement.marker.evaluate({"extra": ""})
        ):
            continue
        found[name] = metadata.distribution(requirement.name)
        pending += found[name].requires or []
    return list(found.values())


def wheel_of_installed(distribution: metadata.Distribution, folder: Path) -> Path:
    """A wheel of ``distribution`` as installed here: the files its RECORD lists under
    site-packages, and its metadata (pip writes the scripts again from
    ``entry_points.txt``)."""
    name = re.sub(r"[-_.]+", "_", distribution.metadata["Name"]).lower()
    wheel_lines = (distribution.read_text("WHEEL") or "").splitlines()
    tags = [line.removeprefix("Tag: ") for line in wheel_lines if line.startswith("Tag: ")]
    tag = tags[0] if tags else "py3-none-any"
    wheel = folder / f"{name}-{distribution.version}-{tag}.whl"
    records, info_folder = [], None
    with zipfile.ZipFile(wheel, "w") as archive:
        for file in distribution.files or []:
            path = file.as_posix()
            if path.startswith("../") or "__pycache__" in file.parts:
                continue  # scripts and data outside site-packages; compiled bytecode
            if file.parent.name.endswith(".dist-info"):
                info_folder = file.parent.as_posix()
                if file.name in INSTALL_RECORDS:
                    continue
            data = Path(file.locate()).read_bytes()
            digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=")
            archive.writestr(path, data)
            records.append(f"{path},sha256={digest.decode()},{len(data)}")
        records.append(f"{info_folder}/RECORD,,")
        archive.writestr(f"{info_folder}/RECORD", "\n".join(records) + "\n")
    return wheel


@pytest.mark.slow
@pytest.mark.skipif(
    not setuptools_builds_wheels(),
    reason="building the SDK without an index needs setuptools>=70.1 here "
    "(pip install './sdk[test]')",
)
def test_the_scaffolds_test_passes_in_a_new_environment_with_only_the_sdk(tmp_path):
    wheels = tmp_path / "wheels"
    wheels.mkdir()
    source = tmp_path / "sdk"  # setuptools builds in the source folder: a copy, not the checkout
    shutil.copytree(
        SDK_SOURCE, source, ignore=shutil.ignore_patterns("build", "*.egg-info", "__pycache__")
    )
    declared = tomllib.loads((source / "pyproject.toml").read_text())["project"]["dependencies"]
    for distribution in installed_closure([*declared, "pytest"]):
        wheel_of_installed(distribution, wheels)
    # pip without its configuration (no index, no find-links of this machine) and no cache
    offline = {
        "PATH": "/usr/bin:/bin",
        "HOME": str(tmp_path),
        "PIP_CONFIG_FILE": os.devnull,
        "PIP_DISABLE_PIP_VERSION_CHECK": "1",
    }
    pip = ["-m", "pip", "--no-cache-dir", "--quiet"]
    build = ["wheel", "--no-deps", "--no-index", "--no-build-isolation", "--wheel-dir", wheels]
    built = subprocess.run(
        [sys.executable, *pip, *build, source],
        capture_output=True,
        text=True,
        # this environment's setuptools, the one setuptools_builds_wheels() looked at
        env={**offline, "PYTHONPATH": os.pathsep.join(sys.path)},
        timeout=300,
    )
    assert built.returncode == 0, built.stdout + built.stderr

    started = time.monotonic()
    environment = tmp_path / "venv"
    venv.create(environment, with_pip=True)
    python = environment / "bin" / "python"
    wanted = ["docplatform-sdk", "pytest"]
    installed = subprocess.run(
        [python, *pip, "install", "--no-index", "--find-links", wheels, *wanted],
        capture_output=True,
        text=True,
        env=offline,
        timeout=300,
    )
    assert installed.returncode == 0, installed.stdout + installed.stderr

    author = {"PATH": f"{environment / 'bin'}:/usr/bin:/bin", "HOME": str(tmp_path)}
    author["NO_COLOR"] = "1"
    new = subprocess.run(
        ["docplatform-integration", "new", "hello"],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env=author,
        stdin=subprocess.DEVNULL,
        timeout=60,
    )
    assert new.returncode == 0, new.stdout + new.stderr
    assert "created hello/test_main.py" in new.stdout
    tested = subprocess.run(
        ["pytest", "-q", "-p", "no:cacheprovider", "hello"],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env=author,
        timeout=120,
    )
    assert tested.returncode == 0, tested.stdout + tested.stderr
    assert "3 passed" in tested.stdout
    print(f"new environment to a passing test: {time.monotonic() - started:.1f} s")

    checked = subprocess.run(
        ["docplatform-integration", "check", "hello"],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env=author,
        timeout=60,
    )
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert "valid" in checked.stdout
    django = subprocess.run([python, "-c", "import django"], capture_output=True, timeout=60)
    assert django.returncode != 0  # nothing of the platform came along
