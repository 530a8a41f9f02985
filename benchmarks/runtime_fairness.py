"""Fair share on one runtime host: a quiet integration's latency while another is hammered.

A real runtime host as in production (``manage.py runtime_host --gunicorn 1``: gunicorn,
gthread, bubblewrap's sandbox, the default pool settings) serves two integrations. The quiet
one answers at once; the hammered one's ``fetch`` takes ``--work-ms`` (a sleep: an
integration waiting on its own API). First ``--calls`` calls of the quiet integration, one at
a time: its quiet p50. Then ``--connections`` clients (a thread and a connection each) send
the hammered integration's envelopes back to back for as long as the quiet integration's
``--calls`` calls take again: its loaded p50. A hammering client answered 503 ``busy``
waits the ``Retry-After`` it was given, as the platform's clients do. Envelopes are signed
and sent as the platform's gateway does (``cold_start.py``). Goal: the loaded p50 at most 2
times the quiet p50.

    .venv/bin/python benchmarks/runtime_fairness.py [--connections 32] [--calls 300] \
        [--work-ms 20]

Needs bubblewrap (``apt-get install bubblewrap``) and the project's virtualenv (``make
install``); no database. It stops the host it started.
"""

import argparse
import os
import statistics
import sys
import tempfile
import threading
import time
from collections import Counter
from contextlib import ExitStack
from pathlib import Path

import requests

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path[:0] = [str(ROOT), str(ROOT / "sdk"), str(HERE)]

from bench_processes import free_port, percentile, start, wait_for
from cold_start import KEY, SCRIPT, send
from docplatform_sdk.codebundle import CodeBundle

HAMMERED = """\
import time
from docplatform_sdk import Response, create_integration


def fetch(request, context):
    time.sleep({seconds!r})
    return Response.json({{"done": True}})


integration = create_integration(fetch=fetch)
"""


def bundle_of(script: str) -> bytes:
    return CodeBundle(script="main.py", files={"main.py": script}).encode()


def quiet_calls(host: str, bundle: bytes, count: int) -> list[float]:
    """The ms of ``count`` calls of the quiet integration, one at a time."""
    session = requests.Session()
    session.trust_env = False
    times = []
    for _ in range(count):
        started = time.perf_counter()
        answer = send(session, host, "quiet", bundle)
        times.append((time.perf_counter() - started) * 1000)
        if answer.status_code != 200:
            raise RuntimeError(f"quiet: {answer.status_code} {answer.text}")
    return times


def hammer(host: str, bundle: bytes, stop: threading.Event, statuses: Counter):
    session = requests.Session()
    session.trust_env = False
    mine: Counter = Counter()
    while not stop.is_set():
        answer = send(session, host, "hammered", bundle)
        mine[answer.status_code] += 1
        if answer.status_code == 503:
            stop.wait(float(answer.headers.get("Retry-After", "1")))
        elif answer.status_code != 200:
            raise RuntimeError(f"hammered: {answer.status_code} {answer.text}")
    statuses.update(mine)


def summary(times: list[float]) -> str:
    return f"p50 {statistics.median(times):.1f} ms, p99 {percentile(times, 0.99):.1f} ms"


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--connections", type=int, default=32)
    parser.add_argument("--calls", type=int, default=300)
    parser.add_argument("--work-ms", type=float, default=20)
    parser.add_argument("--sandbox", default="bwrap")
    args = parser.parse_args()

    scratch = Path(tempfile.mkdtemp(prefix="bench-fairness-"))
    port = free_port()
    host = f"http://127.0.0.1:{port}"
    env = {**os.environ, "DEBUG": "true", "RUNTIME_SIGNING_KEY": KEY}
    env["RUNTIME_SANDBOX"] = args.sandbox
    quiet = bundle_of(SCRIPT.format(version="quiet"))
    hammered = bundle_of(HAMMERED.format(seconds=args.work_ms / 1000))
    with ExitStack() as stack:
        command = [sys.executable, "manage.py", "runtime_host", "--gunicorn", "1"]
        process = start(stack, [*command, "--port", str(port)], env=env, log=scratch / "host.log")
        wait_for(f"{host}/health", process, scratch / "host.log")
        quiet_calls(host, quiet, 20)  # warm: its worker started, connections open
        alone = quiet_calls(host, quiet, args.calls)
        stop, statuses = threading.Event(), Counter()
        clients = [
            threading.Thread(target=hammer, args=(host, hammered, stop, statuses), daemon=True)
            for _ in range(args.connections)
        ]
        for client in clients:
            client.start()
        time.sleep(2)  # the hammered integration's pool grown, its queue full
        loaded = quiet_calls(host, quiet, args.calls)
        stop.set()
        for client in clients:
            client.join()
    ratio = statistics.median(loaded) / statistics.median(alone)
    print(f"quiet integration alone:      {summary(alone)}")
    print(f"while another is hammered:    {summary(loaded)}")
    print(f"hammered integration's answers: {dict(sorted(statuses.items()))}")
    print(f"p50 ratio {ratio:.2f} (goal: at most 2) {'ok' if ratio <= 2 else 'MISSED'}")


if __name__ == "__main__":
    main()
