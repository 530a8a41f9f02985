"""What the benchmarks that start servers share: free ports, servers started in sessions of
their own and stopped on exit, waiting for them to answer, percentiles."""

import os
import signal
import socket
import subprocess
import time
from contextlib import ExitStack
from pathlib import Path

import requests

ROOT = Path(__file__).resolve().parent.parent


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def start(stack: ExitStack, command: list[str], *, env: dict, log: Path) -> subprocess.Popen:
    """Start ``command`` in a session of its own; stopped (SIGTERM, then SIGKILL) on exit."""
    output = stack.enter_context(log.open("wb"))
    process = subprocess.Popen(
        command, cwd=ROOT, env=env, stdout=output, stderr=subprocess.STDOUT, start_new_session=True
    )

    def stop():
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGTERM)
            try:
                process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                os.killpg(process.pid, signal.SIGKILL)
                process.wait()

    stack.callback(stop)
    return process


def wait_for(url: str, process: subprocess.Popen, log: Path, timeout: float = 60) -> None:
    """Until ``url`` answers 200; a clear error when the server exits or does not answer."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"{url}: the server exited; see {log}:\n{log.read_text()[-2000:]}")
        try:
            if requests.get(url, timeout=10).status_code == 200:
                return
        except (requests.ConnectionError, requests.Timeout):  # not up yet, or still starting
            pass
        time.sleep(0.2)
    raise RuntimeError(f"{url} did not answer within {timeout} s")


def percentile(values: list[float], fraction: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(fraction * len(ordered)))]
