"""``integration dev`` as an author runs it: a real process against a live platform (web,
Celery worker, runtime host), republishing on every save and printing what it handles."""

import os
import queue
import re
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
import requests
from django.db import connection
from docplatform_sdk.authoring.scaffold import scaffold_create

from docplatform.services import space_content_update
from integrations.models import Installation
from tests.factories import SpaceFactory

REPO = Path(__file__).resolve().parents[2]
pytestmark = [pytest.mark.slow, pytest.mark.usefixtures("celery_worker")]


def database_url() -> str:
    """The test database, for a process of its own."""
    db = connection.settings_dict
    if connection.vendor == "sqlite":
        return f"sqlite:///{db['NAME']}"
    host = db["HOST"] or "127.0.0.1"
    return f"postgres://{db['USER']}@{host}:{db['PORT'] or 5432}/{db['NAME']}"


class DevProcess:
    """``manage.py integration dev`` in a subprocess; its output read line by line."""

    def __init__(self, *args: str, env: dict):
        self.process = subprocess.Popen(
            [sys.executable, str(REPO / "manage.py"), "integration", "dev", *args],
            cwd=REPO,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )
        self.lines: queue.Queue[str] = queue.Queue()
        self.seen: list[str] = []
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self):
        for line in self.process.stdout:
            self.lines.put(line.rstrip("\n"))

    def wait_for(self, pattern: str, timeout: float = 30) -> re.Match:
        """The first line from here on matching ``pattern``."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            try:
                line = self.lines.get(timeout=0.1)
            except queue.Empty:
                continue
            self.seen.append(line)
            match = re.search(pattern, line)
            if match:
                return match
        raise AssertionError(
            f"no line matching {pattern!r}; output so far:\n" + "\n".join(self.seen)
        )

    def stop(self, signum=signal.SIGINT) -> int:
        if self.process.poll() is None:
            self.process.send_signal(signum)
        try:
            return self.process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            self.process.kill()
            raise


@pytest.fixture
def dev_env(runtime, live_server, settings):
    return {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "tests.settings",
        "DATABASE_URL": database_url(),
        "PLATFORM_URL": live_server.url,
        "INTEGRATIONS_URL": settings.INTEGRATIONS_URL,
        "RUNTIME_URL": runtime.url,
    }


def test_dev_publishes_installs_republishes_on_save_and_prints_what_it_handles(
    tmp_path, runtime, dev_env, org_admin, organization
):
    folder = tmp_path / "live-greeter"
    scaffold_create(folder=folder, organization="acme")
    script = folder / "main.py"
    dev = DevProcess(
        str(folder), "--as", org_admin.username, "--runtime-log", str(runtime.log_path), env=dev_env
    )
    try:
        dev.wait_for(r"^published live-greeter version 1$")
        installation_id = dev.wait_for(r"^installed in acme: (\w+)$")[1]
        dev.wait_for(rf"^installation {installation_id} is active$")
        endpoint = dev.wait_for(r"^public endpoint: (\S+)$")[1]
        dev.wait_for(r"^watching .* for changes")
        dev.wait_for(r"^event installation_setup \[succeeded\] the integration has no handler")
        assert requests.get(endpoint + "/?name=Ada", timeout=20).json() == {
            "message": "Hello, Ada!"
        }
        dev.wait_for(r"^runtime event=fetch integration=live-greeter version=1 status=200 ")

        # Saving a change publishes a new version, which the endpoint runs at once.
        script.write_text(script.read_text().replace('}, {name}!"', '}, dear {name}!"'))
        dev.wait_for(r"^published live-greeter version 2$")
        answer = requests.get(endpoint + "/?name=Ada", timeout=20)
        assert answer.json() == {"message": "Hello, dear Ada!"}

        # A broken save is reported, and the session goes on.
        working = script.read_text()
        script.write_text(working + "\ndef broken(:\n")
        dev.wait_for(r"^script: ")
        dev.wait_for(r"^not published: fix the problems above and save$")
        script.write_text(working)
        dev.wait_for(r"^live-greeter is unchanged: version 2$")

        # Events reaching the installation are printed as the platform records them.
        space = SpaceFactory(organization=organization)
        space_content_update(space=space, pages=[{"path": "intro", "title": "Intro"}])
        dev.wait_for(
            r"^runtime event=space_content_updated integration=live-greeter .* status=200 "
        )
        dev.wait_for(r"^event space_content_updated \[succeeded\] handled \(\d+ ms\)$")
    finally:
        exit_code = dev.stop()
    assert exit_code == 0
    dev.wait_for(r"^stopped$", timeout=5)
    assert not [line for line in dev.seen if "script_required" in line]  # protocol, not calls
    assert Installation.objects.filter(integration__name="live-greeter").count() == 1


def test_dev_stops_cleanly_on_sigterm_and_reuses_the_installation(
    runtime, dev_env, org_admin, organization, tmp_path
):
    folder = tmp_path / "again"
    scaffold_create(folder=folder, organization="acme")
    first = DevProcess(str(folder), "--as", org_admin.username, env=dev_env)
    installation_id = first.wait_for(r"^installed in acme: (\w+)$")[1]
    first.wait_for(r"^watching ")
    assert first.stop(signal.SIGTERM) == 0

    second = DevProcess(str(folder), "--as", org_admin.username, "--org", "acme", env=dev_env)
    try:
        second.wait_for(r"^again is unchanged: version 1$")
        second.wait_for(rf"^installation {installation_id} is active$")
    finally:
        assert second.stop() == 0


def test_dev_usage_errors(dev_env, org_admin, tmp_path):
    folder = tmp_path / "x"
    scaffold_create(folder=folder, organization="acme")
    for arguments, message in [
        ([str(tmp_path / "missing"), "--as", org_admin.username], "no such file or folder"),
        ([str(folder), "--as", "nobody"], "no active user"),
        ([str(folder), "--as", org_admin.username, "--org", "nowhere"], "no such organization"),
        ([str(folder), "--as", org_admin.username, "--runtime-log", "/nope"], "no such file"),
    ]:
        dev = DevProcess(*arguments, env=dev_env)
        assert dev.process.wait(timeout=30) == 2
        dev.wait_for(message, timeout=5)
