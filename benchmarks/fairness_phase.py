"""``public_endpoint.py``'s fairness phase: one integration hammered through its own web server
while another's public endpoint is called one request at a time through the platform's.

Both web servers send their calls to the same sandboxed runtime host. The hammered
integration's ``fetch`` waits ``WORK_MS`` before it answers (an integration waiting on its
own API: it holds its workers, as a busy integration does); ``CONNECTIONS`` keep-alive
connections send it requests back to back. Measured: the quiet endpoint's serial p50 before
the hammering and during it; the goal is the loaded p50 at most 2 times the quiet one. The
host's 503 ``busy`` answers to the hammering (its queue bound) are counted, not failures.
"""

import http.client
import statistics
import threading
import time
from pathlib import Path
from urllib.parse import urlsplit

from bench_processes import load

CONNECTIONS = 32
WORK_MS = 20
HAMMERED_SCRIPT = f"""\
import time

from docplatform_sdk import Response, create_integration


def fetch(request, context):
    time.sleep({WORK_MS / 1000})
    return Response.json({{"hammered": True}})


integration = create_integration(fetch=fetch)
"""
HAMMERED_MANIFEST = """\
name: bench-hammered
title: Bench hammered
description: Answers its public endpoint after a wait.
organization: bench
visibility: private
script: main.py
scopes: []
"""


def install_hammered(scratch: Path, data: dict) -> str:
    """Publish and install the hammered integration; its public endpoint's path."""
    from runtime_paths import publish

    from integrations.models import Installation
    from integrations.services.installations import installation_create

    version = publish(scratch / "hammered", HAMMERED_MANIFEST, HAMMERED_SCRIPT, data["admin"])
    installation = installation_create(
        user=data["admin"],
        integration=version.integration,
        organization=data["organization"],
        space_selection=Installation.SpaceSelection.SELECTED,
    )
    return f"/installations/{installation.pk}/"


def _serial(url: str, expected: bytes, count: int) -> list[float]:
    parts = urlsplit(url)
    connection = http.client.HTTPConnection(parts.hostname, parts.port, timeout=30)
    times = []
    try:
        for _ in range(count):
            started = time.perf_counter()
            connection.request("GET", parts.path)
            answer = connection.getresponse()
            body = answer.read()
            times.append(time.perf_counter() - started)
            if answer.status != 200 or body != expected:
                raise RuntimeError(f"quiet endpoint: {answer.status} {body[:200]!r}")
    finally:
        connection.close()
    return times


def measure(quiet_url: str, hammered_url: str, calls: int) -> dict:
    """The quiet endpoint's serial p50 (ms) alone and while the other is hammered, and what
    the hammering was answered."""
    parts = urlsplit(quiet_url)
    connection = http.client.HTTPConnection(parts.hostname, parts.port, timeout=30)
    connection.request("GET", parts.path)
    expected = connection.getresponse().read()  # as the last version published answers
    connection.close()
    _serial(quiet_url, expected, 50)  # warm-up
    quiet = _serial(quiet_url, expected, calls)
    statuses: dict[int, int] = {}

    def accepted(status: int, body: bytes) -> str | None:
        statuses[status] = statuses.get(status, 0) + 1
        return None if status in (200, 503) else f"{status} {body[:200]!r}"

    load(hammered_url, accepted, CONNECTIONS, 2)  # warm-up: the hammered pool grown
    statuses.clear()
    result: dict = {}
    seconds = max(10.0, statistics.mean(quiet) * calls * 3)
    hammer = threading.Thread(
        target=lambda: result.update(load=load(hammered_url, accepted, CONNECTIONS, seconds)),
        daemon=True,
    )
    hammer.start()
    time.sleep(1)  # the hammering under way
    loaded = _serial(quiet_url, expected, calls)
    hammer.join()
    latencies, rate = result["load"]
    return {
        "quiet_p50": statistics.median(quiet) * 1000,
        "loaded_p50": statistics.median(loaded) * 1000,
        "hammered_rate": rate,
        "hammered_p50": statistics.median(latencies) * 1000,
        "statuses": statuses,
    }
