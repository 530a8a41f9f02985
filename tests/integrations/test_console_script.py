"""``docplatform-integration``: check and publish for authors who do not run the platform.

Run as installed (the ``[project.scripts]`` entry), in an environment without Django
settings, against a live server with a real personal token.
"""

import io
import os
import subprocess
import sys
import time
import zipfile
from pathlib import Path

import pytest
import yaml
from django.conf import settings
from docplatform_sdk.authoring.bundle import integration_bundle
from docplatform_sdk.manifest import check_manifest

from docplatform.services import api_token_create
from integrations.models import IntegrationVersion
from tests.integrations.conftest import minimal_manifest

REPO = Path(__file__).resolve().parents[2]
CONSOLE_SCRIPT = Path(sys.executable).with_name("docplatform-integration")
NO_PLATFORM = ("DJANGO_SETTINGS_MODULE", "DATABASE_URL", "DOCPLATFORM_API", "DOCPLATFORM_TOKEN")
SECRET_MANIFEST = minimal_manifest(
    script="main.py", secrets={"API_KEY": "${{ env.API_KEY }}"}, network={"fetch": []}
)
SCRIPT = "from docplatform_sdk import create_integration\nintegration = create_integration()\n"


def author_env(**extra: str) -> dict:
    """An author's shell: no platform settings at all."""
    env = {name: value for name, value in os.environ.items() if name not in NO_PLATFORM}
    return {**env, **extra}


def console(*args: str, **env: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [str(CONSOLE_SCRIPT), *args],
        capture_output=True,
        text=True,
        cwd=REPO,
        env=author_env(**env),
        timeout=60,
    )


def manage_py(*args: str, **env: str) -> subprocess.CompletedProcess:
    """``manage.py integration ...``; asked again, as its message says to, while the runtime
    host it checks code in (the session's, tests/conftest.py) cannot take the check: in a
    full run other tests keep that host busy loading code."""
    deadline = time.monotonic() + 30
    while True:
        done = subprocess.run(
            [sys.executable, str(REPO / "manage.py"), "integration", *args],
            capture_output=True,
            text=True,
            cwd=REPO,
            env={**os.environ, "RUNTIME_URL": settings.RUNTIME_URL, **env},
            timeout=60,
        )
        if "the code cannot be checked" not in done.stderr and "(RUNTIME_URL " not in done.stderr:
            return done
        if time.monotonic() > deadline:
            return done
        time.sleep(1)


def test_the_console_script_imports_no_django():
    probe = subprocess.run(
        [sys.executable, "-c", "import sys, docplatform_sdk.cli; print('django' in sys.modules)"],
        capture_output=True,
        text=True,
        cwd=REPO,
        env=author_env(),
        timeout=60,
    )
    assert probe.stdout.strip() == "False", probe.stderr


@pytest.mark.slow
@pytest.mark.parametrize(
    ("case", "manifest", "env"),
    [
        ("valid", minimal_manifest(), {}),
        ("invalid", minimal_manifest(visibility="everyone", scopes=["space:everything"]), {}),
        ("empty secret warns", SECRET_MANIFEST, {"API_KEY": ""}),
        ("missing secret", SECRET_MANIFEST, {}),
    ],
)
def test_check_prints_and_exits_as_manage_py_does(write_integration, case, manifest, env):
    folder = write_integration(manifest, files={"main.py": SCRIPT})
    ours = console("check", str(folder), **env)
    theirs = manage_py("check", str(folder), **env)
    assert (ours.returncode, ours.stdout) == (theirs.returncode, theirs.stdout), theirs.stderr
    expected_code = {"valid": 0, "invalid": 1, "empty secret warns": 0, "missing secret": 1}
    assert ours.returncode == expected_code[case]


@pytest.mark.slow
def test_check_usage_errors_exit_2(write_integration, tmp_path):
    folder = write_integration(minimal_manifest())
    for arguments in (
        ["check", str(tmp_path / "missing")],
        ["check", str(folder), "--env-file", str(tmp_path / "missing.env")],
        ["check", "--no-such-option"],
        ["publish", str(folder)],  # no --api
        ["publish", str(folder), "--api", "http://127.0.0.1:9/api/v1"],  # no --token
    ):
        assert console(*arguments).returncode == 2, arguments


def test_the_bundle_holds_the_resolved_manifest_and_only_the_files_it_names(write_integration):
    folder = write_integration(
        SECRET_MANIFEST, files={"main.py": SCRIPT, ".env": "API_KEY=local", "notes.txt": "mine"}
    )
    result = check_manifest(folder, env={"API_KEY": "k-123"})
    with zipfile.ZipFile(io.BytesIO(integration_bundle(folder, result))) as archive:
        assert sorted(archive.namelist()) == ["main.py", "service-manifest.yaml"]
        manifest = yaml.safe_load(archive.read("service-manifest.yaml"))
        assert archive.read("main.py").decode() == SCRIPT
    assert manifest == {**SECRET_MANIFEST, "secrets": {"API_KEY": "k-123"}}


@pytest.fixture
def api(live_server, transactional_db):
    return live_server.url + "/api/v1"


@pytest.fixture
def admin_token(org_admin):
    return api_token_create(user=org_admin, name="console script")[1]


@pytest.mark.slow
def test_publish_resolves_secrets_locally_and_uploads_the_bundle(
    api, admin_token, write_integration, tmp_path
):
    folder = write_integration(SECRET_MANIFEST, files={"main.py": SCRIPT})
    env_file = tmp_path / "secrets.env"
    env_file.write_text("API_KEY=from-the-env-file\n")

    first = console(
        "publish", str(folder), "--env-file", str(env_file), "--api", api, "--token", admin_token
    )
    assert first.returncode == 0, first.stdout + first.stderr
    assert first.stdout == "published hello version 1\n"
    version = IntegrationVersion.objects.get(integration__name="hello")
    assert version.secrets == {"API_KEY": "from-the-env-file"}
    assert version.script_path == "main.py"

    # The options can come from the environment; unchanged content makes no new version.
    again = console(
        "publish",
        str(folder),
        DOCPLATFORM_API=api,
        DOCPLATFORM_TOKEN=admin_token,
        API_KEY="from-the-env-file",
    )
    assert again.returncode == 0, again.stdout + again.stderr
    assert again.stdout == "hello is unchanged: version 1 stays current\n"


@pytest.mark.slow
def test_publish_refusals_exit_1_with_the_apis_reasons(
    api, admin_token, org_member, write_integration
):
    folder = write_integration(minimal_manifest(), files={"main.py": SCRIPT})

    bad_token = console("publish", str(folder), "--api", api, "--token", "dpt_not-a-token")
    assert bad_token.returncode == 1
    assert "publish was refused (401)" in bad_token.stderr

    member_token = api_token_create(user=org_member, name="member")[1]
    not_admin = console("publish", str(folder), "--api", api, "--token", member_token)
    assert not_admin.returncode == 1
    assert "is not an admin of organization 'acme'" in not_admin.stdout

    elsewhere = write_integration(minimal_manifest(organization="nowhere"), folder="elsewhere")
    unknown = console("publish", str(elsewhere), "--api", api, "--token", admin_token)
    assert unknown.returncode == 1
    assert unknown.stdout == "organization: no organization has the id or subdomain 'nowhere'\n"

    broken = write_integration(minimal_manifest(visibility="everyone"), folder="broken")
    local = console("publish", str(broken), "--api", api, "--token", admin_token)
    assert local.returncode == 1
    assert local.stdout.startswith("visibility: ")  # refused here, never uploaded

    unreachable = console(
        "publish", str(folder), "--api", "http://127.0.0.1:9/api/v1", "--token", "t"
    )
    assert unreachable.returncode == 1
    assert "cannot be reached" in unreachable.stderr
    assert not IntegrationVersion.objects.filter(integration__name="hello").exists()


@pytest.mark.slow
def test_publish_prints_the_install_link_and_a_public_listings_review(
    api, admin_token, write_integration
):
    unlisted = write_integration(minimal_manifest(name="shared", visibility="unlisted"))
    published = console("publish", str(unlisted), "--api", api, "--token", admin_token)
    assert published.returncode == 0, published.stdout + published.stderr
    integration = IntegrationVersion.objects.get(integration__name="shared").integration
    link = f"/marketplace/install/shared/?token={integration.install_link_token}"
    assert published.stdout.splitlines() == [
        "published shared version 1",
        f"install link (other organizations install it through it): {settings.PLATFORM_URL}{link}",
    ]
    assert published.stderr == ""

    public = write_integration(minimal_manifest(name="listed"), folder="listed")
    submitted = console("publish", str(public), "--api", api, "--token", admin_token)
    assert submitted.returncode == 0, submitted.stdout + submitted.stderr
    assert submitted.stdout == "published listed version 1\n"
    assert "public listing: waiting for an operator's review" in submitted.stderr
