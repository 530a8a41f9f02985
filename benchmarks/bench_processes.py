"""What the benchmarks that start servers share: free ports, servers started in sessions of
their own and stopped on exit, waiting for them to answer, keeping connections busy,
percentiles."""

import contextlib
import http.client
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from contextlib import ExitStack
from pathlib import Path
from urllib.parse import urlsplit

import requests

from integrations.runtime.process_accounts import children_of

ROOT = Path(__file__).resolve().parent.parent


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def start(
    stack: ExitStack, command: list[str], *, env: dict, log: Path, cwd: Path = ROOT
) -> subprocess.Popen:
    """Start ``command`` in ``cwd`` (this checkout by default), in a session of its own;
    stopped (SIGTERM, then SIGKILL) on exit."""
    output = stack.enter_context(log.open("wb"))
    process = subprocess.Popen(
        command, cwd=cwd, env=env, stdout=output, stderr=subprocess.STDOUT, start_new_session=True
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


def load(
    url: str, check, concurrency: int, seconds: float, *, headers: dict | None = None
) -> tuple[list[float], float]:
    """Keep ``concurrency`` keep-alive connections busy with ``GET url`` for ``seconds``; the
    latencies (s) and requests per second. ``check(status, body)`` says what is wrong with
    an answer (None: nothing); any bad answer fails the run."""
    parts = urlsplit(url)
    latencies: list[float] = []
    failures: list[str] = []
    lock = threading.Lock()
    start_line = threading.Barrier(concurrency + 1)

    def client():
        connection = http.client.HTTPConnection(parts.hostname, parts.port, timeout=30)
        mine = []
        start_line.wait()
        while time.perf_counter() < stop_at:
            started = time.perf_counter()
            connection.request("GET", parts.path, headers=headers or {})
            answer = connection.getresponse()
            body = answer.read()
            mine.append(time.perf_counter() - started)
            problem = check(answer.status, body)
            if problem:
                failures.append(problem)
        connection.close()
        with lock:
            latencies.extend(mine)

    threads = [threading.Thread(target=client, daemon=True) for _ in range(concurrency)]
    for thread in threads:
        thread.start()
    stop_at = time.perf_counter() + seconds
    started = time.perf_counter()
    start_line.wait()
    for thread in threads:
        thread.join()
    elapsed = time.perf_counter() - started
    if failures:
        raise RuntimeError(f"{len(failures)} bad answers from {url}, e.g. {failures[0]}")
    return latencies, len(latencies) / elapsed


CLOCK_TICKS = os.sysconf("SC_CLK_TCK")


def process_tree(pid: int) -> list[int]:
    """``pid`` and its descendants alive now (the runtime host's own walk of a worker's
    tree, ``process_accounts.children_of``)."""
    found, pending = [], [pid]
    while pending:
        current = pending.pop()
        found.append(current)
        with contextlib.suppress(OSError):  # gone meanwhile
            pending += children_of(current)
    return found


def cpu_seconds(pids: list[int]) -> dict[int, float]:
    """The user and system CPU each process of ``pids`` has used so far (its own, not its
    children's)."""
    used = {}
    for pid in pids:
        try:
            fields = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()
        except OSError:
            continue
        used[pid] = (int(fields[11]) + int(fields[12])) / CLOCK_TICKS
    return used


def postgres_pids() -> list[int]:
    """The PostgreSQL server's processes on this machine (its backends among them)."""
    pids = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                if Path(f"/proc/{entry}/comm").read_text().strip() == "postgres":
                    pids.append(int(entry))
            except OSError:
                continue
    return pids


class CpuMeter:
    """The CPU used by named groups of processes over a stretch of time: each group is a
    function returning its processes now (a tree, PostgreSQL's); a process that ends
    within the stretch is not counted."""

    def __init__(self, groups: dict):
        self.groups = groups

    def __enter__(self):
        self.before = {name: cpu_seconds(group()) for name, group in self.groups.items()}
        self.used: dict[str, float] = {}
        return self

    def __exit__(self, *exc_info):
        for name, group in self.groups.items():
            after, before = cpu_seconds(group()), self.before[name]
            self.used[name] = sum(after[pid] - before.get(pid, 0.0) for pid in after)


def start_profilers(directory: Path | None, pids: dict) -> list:
    """py-spy on each named process until stopped (none without ``directory``): collapsed
    stacks in DIR/<name>.txt (flame graph tools and ``grep`` read them). ``web`` is recorded
    with its worker processes, sampling the thread that holds the interpreter's lock (where
    its Python spends CPU, not its threads' waits); any other name, its own process."""
    if directory is None:
        return []
    directory.mkdir(parents=True, exist_ok=True)
    py_spy = Path(sys.executable).parent / "py-spy"
    if not py_spy.exists():
        raise SystemExit(f"--profile needs py-spy: {py_spy.parent}/pip install py-spy")
    profilers = []
    for name, pid in pids.items():
        command = [str(py_spy), "record", "--pid", str(pid), "--rate", "200", "--format", "raw"]
        command += ["--output", str(directory / f"{name}.txt"), "--nonblocking"]
        command += ["--subprocesses", "--gil"] if name == "web" else []
        quiet = {"stdout": subprocess.DEVNULL, "stderr": subprocess.DEVNULL}
        profilers.append(subprocess.Popen(command, **quiet))
    time.sleep(1.0)  # py-spy attaches
    return profilers


def stop_profilers(profilers: list) -> None:
    for profiler in profilers:
        profiler.send_signal(signal.SIGINT)
    for profiler in profilers:
        try:
            profiler.wait(timeout=30)
        except subprocess.TimeoutExpired:
            profiler.kill()
