"""The integration command lines run as operators and authors run them, each in a process of its
own: ``manage.py integration install|configure|pause|resume|uninstall`` (with ``--set``, which
``call_command`` never parsed as the shell does), ``manage.py runtime_host`` and the console
script's ``new``."""

import socket
import subprocess
import sys
from pathlib import Path

import docplatform_sdk
import pytest

from integrations.environment import runtime_signing_key
from integrations.models import Installation
from tests.factories import SiteFactory
from tests.integrations.runtime.support import (
    EnvelopeClient,
    RunningHost,
    free_port,
    wait_for_health,
)
from tests.integrations.runtime.test_host_protocol import ECHO, FETCH_EVENT
from tests.integrations.test_cli_installations import SITE_CONFIG
from tests.processes import BIN, REPO, manage_py, platform_env, run


def integration(*args: str) -> subprocess.CompletedProcess:
    return manage_py("integration", *args)


@pytest.mark.slow
@pytest.mark.django_db(transaction=True)
def test_install_and_configure_with_set_then_pause_resume_uninstall(
    publish, org_admin, organization
):
    publish(org_admin, name="analytics", configurations=SITE_CONFIG, scopes=["site:views:read"])
    site = SiteFactory(organization=organization)
    who = ("--as", org_admin.username)

    installed = integration(
        "install", "analytics", "--org", "acme", "--site", site.id, "--set", "rate=12.5", *who
    )
    assert installed.returncode == 0, installed.stderr
    installation = Installation.objects.get(level="site")
    assert installed.stdout.splitlines() == [
        f"{installation.id} pending",
        "  configuration.tracking_id: is required",
    ]

    configured = integration(
        "configure", installation.id, "--set", "rate=9", "--set", "tracking_id=UA-9", *who
    )
    assert configured.returncode == 0, configured.stderr
    assert configured.stdout.strip() == f"{installation.id} active"
    installation.refresh_from_db()
    assert installation.configuration == {"rate": 9, "tracking_id": "UA-9"}

    refused = integration("configure", installation.id, "--set", "rate=many", *who)
    assert refused.returncode == 1
    assert refused.stdout.splitlines() == ["configuration.rate: 'many' is not a number"]
    assert refused.stderr.strip() == "CommandError: configure was refused"
    assert integration("configure", installation.id, "--set", "rate", *who).returncode == 2
    assert integration("configure", installation.id, *who).returncode == 2

    for action, status in [("pause", "paused"), ("resume", "active")]:
        done = integration(action, installation.id, *who)
        assert (done.returncode, done.stdout.strip()) == (0, f"{installation.id} {status}")
    done = integration("uninstall", installation.id, *who)
    assert (done.returncode, done.stdout.strip()) == (
        0,
        f"uninstalled analytics ({installation.id})",
    )
    assert not Installation.objects.filter(level="site").exists()

    unknown = integration("pause", installation.id, *who)
    assert unknown.returncode == 1
    assert f"{installation.id}: no such installation" in unknown.stderr
    nobody = integration("pause", installation.id, "--as", "nobody")
    assert nobody.returncode == 2
    assert "--as nobody: no active user with that username" in nobody.stderr
    usage = integration("install", "analytics", *who)  # --org is required
    assert usage.returncode == 2
    assert "the following arguments are required: --org" in usage.stderr


@pytest.mark.slow
def test_runtime_host_starts_the_host_with_the_platforms_key(tmp_path):
    port = free_port()
    host = subprocess.Popen(
        [sys.executable, str(REPO / "manage.py"), "runtime_host", "--port", str(port)],
        cwd=REPO,
        # HTTP alone: the session's host keeps the test platform's RUNTIME_URL
        env={**platform_env(RUNTIME_URL=f"http://127.0.0.1:{port}"), "TMPDIR": str(tmp_path)},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        url = f"http://127.0.0.1:{port}"
        wait_for_health(url, host)
        signed = type("Host", (), {"url": url, "signing_key": runtime_signing_key()})()
        answer = EnvelopeClient(signed, "http").call("echo", ECHO, FETCH_EVENT, fetch_body=b"hello")
        assert (answer.status_code, answer.content) == (201, b"hello")
        forged = type("Host", (), {"url": url, "signing_key": "not-the-platforms-key"})()
        refused = EnvelopeClient(forged, "http").call(
            "echo", ECHO, FETCH_EVENT, fetch_body=b"hello"
        )
        assert refused.status_code == 401
    finally:
        host.terminate()
        host.wait(timeout=10)


@pytest.mark.slow
@pytest.mark.parametrize("scheme", ["unix", "tcp"])
def test_runtime_host_serves_frames_where_runtime_url_says(tmp_path, scheme):
    from integrations.runtime import frames

    port, socket_path = free_port(), tmp_path / "runtime.sock"
    url = f"unix://{socket_path}" if scheme == "unix" else f"tcp://127.0.0.1:{free_port()}"
    host = subprocess.Popen(
        [sys.executable, str(REPO / "manage.py"), "runtime_host", "--port", str(port)],
        cwd=REPO,
        env={**platform_env(RUNTIME_URL=url), "TMPDIR": str(tmp_path)},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        wait_for_health(f"http://127.0.0.1:{port}", host)  # HTTP beside the frames
        fields = [None] * frames.REQUEST_FIELDS
        fields[frames.PATH] = b"/health"
        for key, status in ((runtime_signing_key(), 200), ("not-the-platforms-key", 401)):
            with frames.Connection(url, key, 5) as connection:
                assert connection.call(fields, timeout=10, answer_limit=65536).status == status
    finally:
        host.terminate()
        host.wait(timeout=10)
    assert not socket_path.exists()  # removed on the way out


@pytest.mark.slow
def test_a_host_never_takes_the_socket_another_host_answers_on_but_replaces_a_dead_ones(
    tmp_path,
):
    from integrations.runtime import frames

    key, fields = runtime_signing_key(), [None] * frames.REQUEST_FIELDS
    fields[frames.PATH] = b"/health"
    first = RunningHost(key, tmp_path / "first.log")
    try:
        port, path = str(free_port()), str(first.socket_path)
        command = ["-m", "integrations.runtime.host", "--port", port, "--socket", path]
        env = {**platform_env(RUNTIME_SIGNING_KEY=key), "TMPDIR": str(tmp_path)}
        second = run([sys.executable, *command], env)
        assert second.returncode == 1, second.stderr
        assert f"another runtime host answers on {first.socket_path}" in second.stderr
        assert "Traceback" not in second.stderr
        lingering = frames.Connection(first.frames_url, key, 5)  # still the first's
        assert lingering.call(fields, timeout=10, answer_limit=65536).status == 200
    finally:
        first.stop()  # with a connection open
    assert not first.socket_path.exists()  # its own, removed on the way out
    assert "Traceback" not in first.log() and "Exception" not in first.log(), first.log()
    lingering.close()
    # a host that died (SIGKILL) leaves its socket file, with nobody listening on it
    with socket.socket(socket.AF_UNIX) as dead:
        dead.bind(str(first.socket_path))
    after = RunningHost(key, tmp_path / "first.log")  # the same socket path
    try:
        with frames.Connection(after.frames_url, key, 5) as connection:
            assert connection.call(fields, timeout=10, answer_limit=65536).status == 200
    finally:
        after.stop()


def host_started(tmp_path, *options: str, **environment: str) -> subprocess.CompletedProcess:
    """``python -m integrations.runtime.host`` as the Procfile starts it, until it gives up."""
    env = {**platform_env(**environment), "TMPDIR": str(tmp_path), "RUNTIME_SANDBOX": "off"}
    return run([sys.executable, "-m", "integrations.runtime.host", *options], env)


@pytest.mark.slow
def test_a_host_that_cannot_start_says_why_without_a_traceback(tmp_path):
    key = runtime_signing_key()
    unsigned = host_started(tmp_path, "--port", str(free_port()), RUNTIME_SIGNING_KEY="")
    assert unsigned.returncode != 0
    assert "runtime host: set RUNTIME_SIGNING_KEY" in unsigned.stderr
    with socket.create_server(("127.0.0.1", 0)) as taken:
        port = taken.getsockname()[1]
        http = host_started(tmp_path, "--port", str(port), RUNTIME_SIGNING_KEY=key)
        assert http.returncode == 1
        assert f"runtime host: cannot listen on http://127.0.0.1:{port}: " in http.stderr
        assert "give another --port" in http.stderr
        socket_path = tmp_path / "runtime.sock"
        frames_tcp = host_started(
            tmp_path,
            *("--port", str(free_port()), "--socket", str(socket_path)),
            *("--frames-port", str(port)),
            RUNTIME_SIGNING_KEY=key,
        )
        assert frames_tcp.returncode == 1
        assert f"cannot listen on tcp://127.0.0.1:{port}" in frames_tcp.stderr
        assert not socket_path.exists()  # the Unix socket it had made, removed
    long_path = tmp_path / ("s" * 120 + ".sock")
    too_long = host_started(
        tmp_path, "--port", str(free_port()), "--socket", str(long_path), RUNTIME_SIGNING_KEY=key
    )
    assert too_long.returncode == 1
    assert "a Unix socket's path is at most 107 bytes; give a shorter --socket" in too_long.stderr
    for failed in (unsigned, http, frames_tcp, too_long):
        assert "Traceback" not in failed.stderr, failed.stderr


def test_the_console_script_new_scaffolds_what_check_accepts(tmp_path):
    console = str(BIN / "docplatform-integration")
    # an author's shell: no platform settings, no login yet; the SDK under test
    sdk = str(Path(docplatform_sdk.__file__).resolve().parents[1])
    env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), "PYTHONPATH": sdk}
    folder = tmp_path / "release-notes"
    made = run([console, "new", str(folder), "--organization", "acme"], env)
    assert made.returncode == 0, made.stderr
    scaffold = ("service-manifest.yaml", "main.py", "test_main.py", "README.md")
    assert made.stdout.splitlines() == [
        *(f"created {folder / name}" for name in scaffold),
        "not logged in: to try it on a platform, run docplatform-integration login --api "
        "https://HOST/api/v1 (a token from the marketplace's Developer settings)",
        f"next: pytest {folder}    # its test hands main.py a sample event, here",
        f"then: docplatform-integration dev {folder}    # on the platform, live",
    ]
    checked = run([console, "check", str(folder)], env)
    assert (checked.returncode, checked.stdout) == (0, "release-notes: the manifest is valid\n")

    again = run([console, "new", str(folder)], env)
    assert again.returncode == 2
    assert again.stderr.startswith("error: ") and again.stdout == ""
    usage = run([console, "nothing-of-the-kind"], env)
    assert usage.returncode == 2
    assert "invalid choice: 'nothing-of-the-kind'" in usage.stderr
