"""``make run``'s ``ready`` process: the addresses once everything answers, below the servers'
start-up lines; a server that does not answer is named; Ctrl-C (SIGTERM from honcho) ends it
quietly."""

import signal
import subprocess
import sys

import pytest

from tests.processes import REPO, platform_env

SUMMARY = "Demo data ready. Sign in at http://127.0.0.1:8000/admin/ as 'admin'.\n"


def ready(tmp_path, *arguments: str, **environment: str) -> subprocess.Popen:
    """``manage.py dev_ready``; the platform's origin is the live server, the sites' the same
    server by another host name (each origin on a host of its own, as the settings require)."""
    (tmp_path / "demo-summary.txt").write_text(SUMMARY)
    environment.setdefault("INTEGRATIONS_URL", "http://127.0.0.3:9")
    return subprocess.Popen(
        [sys.executable, str(REPO / "manage.py"), "dev_ready", *arguments],
        cwd=REPO,
        env=platform_env(VAR_DIR=str(tmp_path), **environment),
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )


def sites(live_server) -> str:
    return live_server.url.replace("localhost", "127.0.0.1")


def lines_until_stopped(process: subprocess.Popen, last: str) -> list[str]:
    """Its lines up to ``last``, then SIGTERM: it must end at once, with status 0."""
    lines = []
    for line in process.stdout:  # bounded by the command's own --patience
        lines.append(line.rstrip("\n"))
        if line.startswith(last):
            break
    process.send_signal(signal.SIGTERM)
    assert process.wait(timeout=10) == 0, [*lines, process.stdout.read()]
    return lines


@pytest.mark.slow
def test_once_everything_answers_it_prints_the_addresses_and_the_demo_summary(
    tmp_path, live_server, runtime_host
):
    process = ready(
        tmp_path,
        "--patience", "30",
        PLATFORM_URL=live_server.url, SITES_URL=sites(live_server), RUNTIME_URL=runtime_host.url,
    )  # fmt: skip
    lines = lines_until_stopped(process, "Press Ctrl-C")
    assert lines[0] == "=" * 78
    assert lines[1] == SUMMARY.strip()
    assert lines[2] == (
        f"The marketplace: {live_server.url}/marketplace/ · operators: {live_server.url}/admin/"
        f" · sites: {sites(live_server)}/ · runtime host: {runtime_host.url}"
    )
    assert lines[3:] == ["Press Ctrl-C to stop everything."]


@pytest.mark.slow
def test_a_server_that_does_not_answer_is_named(tmp_path, live_server):
    process = ready(
        tmp_path,
        "--patience", "1",
        PLATFORM_URL=live_server.url, SITES_URL=sites(live_server), RUNTIME_URL="http://127.0.0.1:9",
    )  # fmt: skip
    lines = lines_until_stopped(process, "Press Ctrl-C")
    assert lines[1] == "Not answering after 1 s: the runtime host."
