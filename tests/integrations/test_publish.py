"""Publishing through the command line and the publish service."""

import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command
from django.db import connection

from integrations.models import Integration, IntegrationAsset, IntegrationVersion
from tests.factories import MembershipFactory, OrganizationFactory
from tests.integrations.conftest import minimal_manifest, png_bytes

REPO = Path(__file__).resolve().parents[2]
SCRIPT = "from docplatform_sdk import create_integration\n\nintegration = create_integration()\n"
pytestmark = pytest.mark.django_db


def publish(path, username, *extra):
    return call_command("integration", "publish", str(path), "--as", username, *extra)


def test_publish_creates_the_integration_and_its_first_version(
    write_integration, org_admin, capsys
):
    folder = write_integration(
        minimal_manifest(
            script="./main.py",
            icon="icon.png",
            previewImages=["preview.png"],
            categories=["content"],
        ),
        files={
            "main.py": SCRIPT,
            "icon.png": png_bytes(),
            "preview.png": png_bytes(1600, 800),
        },
    )
    publish(folder, org_admin.username)
    assert "published hello version 1" in capsys.readouterr().out
    integration = Integration.objects.get(name="hello")
    assert integration.organization.subdomain == "acme"
    assert integration.categories == ["content"]
    version = integration.latest_version
    assert version.number == 1
    assert json.loads(bytes(version.bundle)) == {
        "script": "main.py",
        "files": {"main.py": SCRIPT},
    }
    assert version.bundle_hash == hashlib.sha256(bytes(version.bundle)).hexdigest()
    assert version.script_path == "main.py"
    kinds = sorted(IntegrationAsset.objects.filter(version=version).values_list("kind", "width"))
    assert kinds == [("icon", 64), ("preview", 1600)]


def test_publishing_unchanged_content_creates_no_new_version(write_integration, org_admin, capsys):
    folder = write_integration(minimal_manifest())
    publish(folder, org_admin.username)
    publish(folder, org_admin.username)
    assert "hello is unchanged: version 1 stays current" in capsys.readouterr().out
    assert IntegrationVersion.objects.filter(integration__name="hello").count() == 1

    write_integration(minimal_manifest(description="Says hello, louder."))
    publish(folder, org_admin.username)
    integration = Integration.objects.get(name="hello")
    assert integration.latest_version.number == 2
    assert integration.description == "Says hello, louder."


def test_a_member_who_is_not_an_admin_cannot_publish(write_integration, org_member):
    folder = write_integration(minimal_manifest())
    with pytest.raises(CommandError, match="is not an admin of organization 'acme'") as error:
        publish(folder, org_member.username)
    assert error.value.returncode == 1
    assert not Integration.objects.filter(name="hello").exists()


def test_a_name_owned_by_another_organization_is_refused(write_integration, org_admin, capsys):
    publish(write_integration(minimal_manifest()), org_admin.username)
    other = MembershipFactory(organization=OrganizationFactory(subdomain="globex"), role="admin")
    folder = write_integration(minimal_manifest(organization="globex"), folder="theirs")
    with pytest.raises(CommandError, match="publish was refused"):
        publish(folder, other.user.username)
    assert (
        "name: the name 'hello' belongs to another organization's integration"
        in capsys.readouterr().out
    )
    assert Integration.objects.get(name="hello").organization.subdomain == "acme"


def test_an_unknown_organization_cannot_publish(write_integration, org_admin, capsys):
    folder = write_integration(minimal_manifest(organization="nowhere"))
    with pytest.raises(CommandError):
        publish(folder, org_admin.username)
    assert "organization: no organization has the id or subdomain 'nowhere'" in (
        capsys.readouterr().out
    )


def test_the_organization_may_be_named_by_its_id(write_integration, org_admin, organization):
    publish(write_integration(minimal_manifest(organization=organization.id)), org_admin.username)
    assert Integration.objects.get(name="hello").organization == organization


def test_internal_scopes_need_an_internal_organization(
    write_integration, org_admin, organization, capsys
):
    folder = write_integration(minimal_manifest(scopes=["site:script:inject"]))
    with pytest.raises(CommandError):
        publish(folder, org_admin.username)
    assert "scopes[0]" in capsys.readouterr().out
    organization.internal = True
    organization.save()
    publish(folder, org_admin.username)
    assert Integration.objects.get(name="hello").scopes == ["site:script:inject"]


def test_secrets_come_from_the_env_file_and_are_encrypted_at_rest(
    write_integration, org_admin, tmp_path, monkeypatch
):
    monkeypatch.setenv("HELLO_CLIENT_ID", "from-process")
    env_file = tmp_path / "secrets.env"
    env_file.write_text("HELLO_CLIENT_SECRET=s3cr3t-value\nHELLO_CLIENT_ID=from-file\n")
    folder = write_integration(
        minimal_manifest(
            secrets={
                "CLIENT_ID": "${{ env.HELLO_CLIENT_ID }}",
                "CLIENT_SECRET": "${{ env.HELLO_CLIENT_SECRET }}",
            }
        )
    )
    publish(folder, org_admin.username, "--env-file", str(env_file))
    version = IntegrationVersion.objects.get(integration__name="hello")
    assert version.secrets == {"CLIENT_ID": "from-file", "CLIENT_SECRET": "s3cr3t-value"}
    assert "s3cr3t-value" not in str(version.manifest)
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT secrets FROM integrations_integrationversion WHERE id = %s", [version.pk]
        )
        (stored,) = cursor.fetchone()
    assert "s3cr3t-value" not in stored and "CLIENT_SECRET" not in stored


def test_a_missing_secret_variable_is_named(write_integration, org_admin, capsys):
    folder = write_integration(minimal_manifest(secrets={"TOKEN": "${{ env.HELLO_NOT_SET }}"}))
    with pytest.raises(CommandError):
        publish(folder, org_admin.username)
    out = capsys.readouterr().out
    assert "secrets.TOKEN" in out and "HELLO_NOT_SET" in out
    assert not Integration.objects.filter(name="hello").exists()


def test_a_changed_secret_makes_a_new_version(write_integration, org_admin, monkeypatch):
    folder = write_integration(minimal_manifest(secrets={"TOKEN": "${{ env.HELLO_TOKEN }}"}))
    monkeypatch.setenv("HELLO_TOKEN", "one")
    publish(folder, org_admin.username)
    monkeypatch.setenv("HELLO_TOKEN", "two")
    publish(folder, org_admin.username)
    assert [
        v.secrets["TOKEN"]
        for v in IntegrationVersion.objects.filter(integration__name="hello").order_by("number")
    ] == [
        "one",
        "two",
    ]


def test_the_platform_env_file_never_feeds_secrets(
    write_integration, org_admin, capsys, monkeypatch
):
    """settings read .env (and their defaults) into their own mapping, not into os.environ:
    a platform setting the process environment does not hold resolves no secret."""
    from django.conf import settings

    monkeypatch.delenv("LOG_LEVEL", raising=False)
    assert settings.LOGGING  # the platform has its LOG_LEVEL all the same
    folder = write_integration(minimal_manifest(secrets={"KEY": "${{ env.LOG_LEVEL }}"}))
    with pytest.raises(CommandError):
        publish(folder, org_admin.username)
    assert "LOG_LEVEL" in capsys.readouterr().out


def test_an_unknown_publisher_is_a_usage_error(write_integration):
    with pytest.raises(CommandError, match="no active user") as error:
        publish(write_integration(minimal_manifest()), "ghost")
    assert error.value.returncode == 2


def run_cli(*args, cwd=REPO):
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    return subprocess.run(
        [sys.executable, str(REPO / "manage.py"), "integration", *args],
        capture_output=True,
        text=True,
        cwd=cwd,
        env=env,
        timeout=60,
    )


@pytest.mark.slow
def test_check_exit_codes_from_the_real_command_line(write_integration):
    valid = write_integration(minimal_manifest())
    result = run_cli("check", str(valid))
    assert result.returncode == 0, result.stderr
    assert "hello: the manifest is valid" in result.stdout

    invalid = write_integration(
        minimal_manifest(visibility="everyone", visiblity="public"), folder="bad"
    )
    result = run_cli("check", str(invalid / "service-manifest.yaml"))
    assert result.returncode == 1
    lines = result.stdout.splitlines()
    assert any(line.startswith("visibility: ") for line in lines)
    assert any(
        line.startswith("visiblity: ") and "did you mean 'visibility'" in line for line in lines
    )
    assert "Traceback" not in result.stderr

    assert run_cli("check", "/no/such/folder").returncode == 2
    assert run_cli("check", str(valid), "--env-file", "/no/such.env").returncode == 2
    assert run_cli("frobnicate").returncode == 2


@pytest.mark.slow
def test_check_defaults_to_the_current_folder(write_integration):
    folder = write_integration(minimal_manifest())
    result = run_cli("check", cwd=folder)
    assert result.returncode == 0, result.stdout + result.stderr
