"""A worker machine's own metrics (README, "Traces and metrics"): ``manage.py metrics_serve``
answers the counters of the processes of its machine (its folder) to the scraper's token,
a 404 to anyone else, and leaves out the gauges the web server answers for every machine."""

import re
import socket
import subprocess
import sys
import time

import pytest
import requests
from prometheus_client.parser import text_string_to_metric_families

from tests.processes import REPO, manage_py, platform_env, start, stop

TOKEN = "machine-metrics-token"


@pytest.fixture
def folder(tmp_path):
    """The machine's metrics folder (``PROMETHEUS_MULTIPROC_DIR``)."""
    path = tmp_path / "metrics"
    path.mkdir()
    return path


@pytest.fixture
def serve(folder, tmp_path):
    """Start ``manage.py metrics_serve`` on a free port; its URL. Stopped at the end."""
    started = []

    def run(**environment) -> str:
        env = platform_env(PROMETHEUS_MULTIPROC_DIR=str(folder), **environment)
        log = tmp_path / f"serve{len(started)}.log"
        command = [sys.executable, "manage.py", "metrics_serve", "--port", "0"]
        started.append(start(command, env, log))
        deadline = time.monotonic() + 30
        while not (found := re.search(r"http://\S+/metrics.*", log.read_text())):
            assert started[-1].poll() is None, log.read_text()
            assert time.monotonic() < deadline, log.read_text()
            time.sleep(0.05)
        return found[0]

    yield run
    for process in started:
        stop(process)


def count_in_another_process(folder, failed: int) -> None:
    """A Celery worker child, say: it counts ``failed`` deliveries into the folder, and exits."""
    code = (
        "from docplatform.observability.metrics import deliveries_settled;"
        f"deliveries_settled('webhook', 'failed', {failed})"
    )
    env = platform_env(PROMETHEUS_MULTIPROC_DIR=str(folder))
    subprocess.run([sys.executable, "-c", code], check=True, cwd=REPO, env=env, timeout=60)


def get(url: str, token: str | None = TOKEN, method: str = "GET"):
    headers = {"Authorization": f"Bearer {token}"} if token is not None else {}
    with requests.Session() as session:
        session.trust_env = False  # no proxy for 127.0.0.1
        response = session.request(method, url, headers=headers, timeout=10)
    return response.status_code, response.headers, response.text


@pytest.mark.slow
def test_a_worker_machine_serves_its_processes_counters_to_the_token(serve, folder):
    count_in_another_process(folder, 3)
    line = serve(METRICS_TOKEN=TOKEN)
    url = line.split()[0]

    status, headers, body = get(url)
    assert status == 200
    assert headers["Content-Type"].startswith("text/plain")
    families = {family.name: family for family in text_string_to_metric_families(body)}
    (failed,) = [
        sample
        for sample in families["docplatform_deliveries"].samples
        if sample.name == "docplatform_deliveries_total"
        and sample.labels == {"consumer": "webhook", "outcome": "failed"}
    ]
    assert failed.value == 3
    # The gauges read from the database and the runtime hosts count every machine: the web
    # server's /metrics answers them, once.
    assert "docplatform_outbox_backlog" not in families
    assert "docplatform_runtime_workers" not in families

    count_in_another_process(folder, 2)
    assert 'outcome="failed"} 5.0' in get(url)[2]

    assert get(url, token=None)[0] == 404
    assert get(url, token="not-the-token")[0] == 404
    assert get(url.replace("/metrics", "/other"))[0] == 404
    assert get(url, method="POST")[0] == 404


@pytest.mark.slow
def test_without_a_token_every_request_gets_404(serve):
    line = serve(METRICS_TOKEN="")
    assert "METRICS_TOKEN unset" in line
    assert get(line.split()[0])[0] == 404
    assert get(line.split()[0], token="")[0] == 404


@pytest.mark.slow
def test_a_port_it_cannot_listen_on_is_named():
    refused = manage_py("metrics_serve", "--port", "70000")
    assert refused.returncode == 1
    assert "--port: 70000 is not a port" in refused.stderr
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        refused = manage_py("metrics_serve", "--port", str(port))
    assert refused.returncode == 1
    assert f"--bind/--port: cannot listen on 127.0.0.1:{port}" in refused.stderr
    assert "Traceback" not in refused.stderr
