"""``integration new``: a scaffold that ``check`` accepts as it is and that runs."""

import os
import subprocess
import sys
from pathlib import Path

import pytest
from django.conf import settings
from django.core.management import call_command
from docplatform_sdk.manifest import check_manifest

from tests.integrations.runtime.support import EnvelopeClient, environment_for

REPO = Path(__file__).resolve().parents[2]


def run_command(*args) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, str(REPO / "manage.py"), "integration", *args],
        capture_output=True,
        text=True,
        cwd=REPO,
        # check loads the code in the runtime host (the session's, tests/conftest.py)
        env={**os.environ, "PYTHONPATH": str(REPO), "RUNTIME_URL": settings.RUNTIME_URL},
        timeout=60,
    )


@pytest.mark.django_db
def test_new_scaffolds_a_folder_that_check_accepts_as_it_is(tmp_path, capsys):
    folder = tmp_path / "Release Notes"
    call_command("integration", "new", str(folder), "--organization", "acme")
    assert sorted(path.name for path in folder.iterdir()) == [
        "README.md",
        "main.py",
        "service-manifest.yaml",
        "test_main.py",
    ]
    call_command("integration", "check", str(folder))
    assert "release-notes: the manifest is valid" in capsys.readouterr().out

    manifest = check_manifest(folder).manifest
    assert (manifest.name, manifest.title, manifest.organization) == (
        "release-notes",
        "Release Notes",
        "acme",
    )
    assert manifest.script.path == "main.py"
    assert manifest.scopes == ("space:content:read",)
    assert manifest.visibility == "private"
    assert list(manifest.configurations["account"]["properties"]) == ["greeting"]
    assert "secrets" not in manifest.raw  # only an example, as a comment
    assert "${{ env.API_KEY }}" in (folder / "service-manifest.yaml").read_text()
    assert "docplatform-integration dev" in (folder / "README.md").read_text()
    where_prints_show = " ".join((folder / "main.py").read_text().split())
    assert (
        "prints shows where you follow its logs: the output of ``docplatform-integration dev`` "
        "and ``docplatform-integration tail``, and the installation's Logs page"
    ) in where_prints_show
    assert "runtime host's log" not in where_prints_show


@pytest.mark.slow
def test_a_non_empty_folder_is_a_usage_error_unless_forced(tmp_path):
    folder = tmp_path / "taken"
    folder.mkdir()
    (folder / "notes.txt").write_text("mine")

    refused = run_command("new", str(folder), "--name", "taken")
    assert refused.returncode == 2
    assert "is not empty" in refused.stderr
    assert sorted(path.name for path in folder.iterdir()) == ["notes.txt"]

    forced = run_command("new", str(folder), "--name", "taken", "--force")
    assert forced.returncode == 0, forced.stderr
    assert (folder / "notes.txt").read_text() == "mine"
    assert run_command("check", str(folder)).returncode == 0


@pytest.mark.parametrize(
    ("arguments", "reason"),
    [
        (["--name", "Not A Name"], "is not an integration name"),
        (["--organization", "no spaces allowed"], "is not an organization"),
    ],
)
def test_bad_names_are_usage_errors(tmp_path, arguments, reason):
    result = run_command("new", str(tmp_path / "x"), *arguments)
    assert result.returncode == 2
    assert reason in result.stderr
    assert not (tmp_path / "x").exists()


def test_the_scaffolded_script_runs_in_the_runtime_host(tmp_path, runtime_host):
    folder = tmp_path / "greeter"
    call_command("integration", "new", str(folder), "--organization", "acme")
    script = (folder / "main.py").read_text()
    client = EnvelopeClient(runtime_host)
    environment = environment_for("greeter", script, runtime_host.url)
    environment["installation"]["configuration"] = {"greeting": "Howdy"}
    endpoint = environment["installation"]["urls"]["publicEndpoint"]

    request = {"method": "GET", "url": endpoint + "/?name=Ada", "headers": {}}
    fetched = client.call(
        "greeter", script, {"type": "fetch", "eventId": "e1", "request": request}, environment
    )
    assert fetched.json() == {"message": "Howdy, Ada!"}

    render = {"type": "ui_render", "eventId": "e2", "componentId": "greeter", "props": {}}
    render.update(state={"waves": 2}, action={"action": "wave"})
    rendered = client.call("greeter", script, render, environment)
    assert rendered.json()["state"] == {"waves": 3}
    assert "Howdy! Waved 3 time(s)." in str(rendered.json()["element"])

    updated = client.call(
        "greeter",
        script,
        {"type": "space_content_updated", "eventId": "e3", "spaceId": "s1", "revisionId": "r9"},
        environment,
    )
    assert updated.json() == {"handled": True}
