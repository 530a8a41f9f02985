"""The runtime host alone under load: its CPU per call, with no web server, database or
Django in the way (the figure the host's own changes move, which the whole platform's
benchmark, ``public_endpoint.py``, buries in the web processes' noise).

A host as the tests start it (``python -m integrations.runtime.host --socket PATH``, the
sandbox on: bubblewrap, seccomp; 4 workers per version) takes ``--concurrency`` frame
connections, each a thread that sends a signed ``fetch`` envelope and waits for its answer,
back to back, for ``--seconds``; the integration answers ``{"message": "Hello, bench!"}``
as the public endpoint's does. Printed per round: calls per second, and the CPU (user and
system, ``/proc``) of the host's process and of its workers per call. Each round starts a
host of its own; compare two trees by running each in turn (``--root``).

    .venv/bin/python benchmarks/runtime_host_load.py [--rounds 3] [--seconds 8] \
        [--concurrency 8] [--root PATH]

Needs bubblewrap (``apt-get install bubblewrap``); nothing else (no PostgreSQL, no Redis).
"""

import argparse
import os
import shutil
import sys
import tempfile
import threading
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--seconds", type=float, default=8)
    parser.add_argument("--concurrency", type=int, default=8, help="frame connections")
    parser.add_argument("--root", default=str(HERE.parent), help="the tree whose host runs")
    args = parser.parse_args()
    root = Path(args.root).resolve()
    sys.path[:0] = [str(root), str(root / "sdk")]
    # The host is started from ``root`` and finds the SDK there (not this venv's install).
    os.environ["PYTHONPATH"] = os.pathsep.join([str(root), str(root / "sdk")])
    print(f"runtime host of {root}: {args.concurrency} connections, {args.seconds:g} s a round")
    for _ in range(args.rounds):
        rate, host_ms, workers_ms = one_round(args.seconds, args.concurrency)
        print(f"{rate:7.0f} calls/s; CPU per call: host {host_ms:.3f} ms, workers {workers_ms:.3f}")


SCRIPT = """
from docplatform_sdk import Response, create_integration

def fetch(request, context):
    return Response.json({"message": "Hello, bench!"})

integration = create_integration(fetch=fetch)
"""
EVENT = {
    "type": "fetch",
    "eventId": "bench",
    "request": {"method": "GET", "url": "http://platform.invalid/", "headers": {"Accept": "*/*"}},
}


def one_round(seconds: float, concurrency: int) -> tuple[float, float, float]:
    from bench_processes import CpuMeter, process_tree

    from tests.integrations.runtime.support import (
        EnvelopeClient,
        RunningHost,
        envelope_parts,
        environment_for,
    )

    log = Path(tempfile.mkdtemp(prefix="bench-host-load-")) / "host.log"
    host = RunningHost("bench-signing-key", log, RUNTIME_WORKERS_PER_VERSION="4")
    try:
        clients = [EnvelopeClient(host) for _ in range(concurrency)]
        for client in clients:  # the code sent once, each connection made
            answer = client.call("bench", SCRIPT, EVENT)
            assert answer.status_code == 200, answer.content
        parts = envelope_parts(EVENT, environment_for("bench", SCRIPT, host.url))
        calls = [0] * concurrency
        stop_at = time.monotonic() + seconds

        def hammer(index: int):
            while time.monotonic() < stop_at:
                answer = clients[index].post("bench", parts)
                assert answer.status_code == 200, answer.content
                calls[index] += 1

        groups = {
            "host": lambda: [host.process.pid],
            "workers": lambda: process_tree(host.process.pid)[1:],
        }
        threads = [threading.Thread(target=hammer, args=(i,)) for i in range(concurrency)]
        with CpuMeter(groups) as meter:
            started = time.monotonic()
            for thread in threads:
                thread.start()
            for thread in threads:
                thread.join()
            elapsed = time.monotonic() - started
        total = sum(calls)
        per_call = {name: used / total * 1000 for name, used in meter.used.items()}
        return total / elapsed, per_call["host"], per_call["workers"]
    finally:
        host.stop()
        shutil.rmtree(log.parent, ignore_errors=True)


if __name__ == "__main__":
    sys.path.insert(0, str(HERE))
    main()
