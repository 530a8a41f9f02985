"""Where the time of one runtime call goes, on the platform's side and in the host.

A real runtime host as production runs it (``manage.py runtime_host --socket PATH``, frames
on a Unix socket; ``--transport http``: ``--gunicorn 1``, HTTP; the sandbox on) and, in this
process, the platform (PostgreSQL): an installation's public endpoint is requested through
Django's test client ``--calls`` times in a row (``--path``: the public endpoint, a
component render or action through the API, or an API read without a call). Printed: the
wall ms per call, the CPU ms per call in this process (the web side), in the runtime host's
process and in its workers (``/proc``, user and system, over the same calls), the SQL
statements per call, and the web side's top functions by own CPU (cProfile, process time).

    .venv/bin/python benchmarks/runtime_profile.py [--calls 2000] [--top 25] [--save FILE]

The shared cache is the database's unless ``CACHE_URL`` is set: production's and
``public_endpoint.py``'s is Redis (``CACHE_URL=redis://127.0.0.1:6379/12``), without which the
API's throttle and a block's kept markup each add a transaction to render and action.

Needs PostgreSQL (``--postgres``, trust auth) on 127.0.0.1; it creates and drops a database
of its own (``test_bench_runtime_profile``) and stops the host it started.
"""

import argparse
import base64
import cProfile
import os
import pstats
import secrets
import shutil
import sys
import tempfile
import time
from collections import Counter
from contextlib import ExitStack
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path[:0] = [str(ROOT), str(HERE)]

from bench_processes import CpuMeter, free_port, process_tree, start, wait_for

DATABASE = "bench_runtime_profile"


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--postgres", default="postgres://postgres@127.0.0.1:5432")
    parser.add_argument("--calls", type=int, default=2000)
    parser.add_argument("--top", type=int, default=25)
    parser.add_argument("--sandbox", default="bwrap")
    parser.add_argument("--wall", action="store_true", help="profile wall time, not CPU")
    parser.add_argument(
        "--path", choices=("endpoint", "render", "action", "api"), default="endpoint"
    )
    parser.add_argument(
        "--transport",
        choices=("unix", "http"),
        default="unix",
        help="frames on a Unix socket (the host's event loop) or HTTP (the host under gunicorn)",
    )
    parser.add_argument("--database", default=DATABASE, help="its name (test_ is prefixed)")
    parser.add_argument(
        "--save", type=Path, help="write the profile there too (pstats: callers, snakeviz)"
    )
    args = parser.parse_args()

    scratch = Path(tempfile.mkdtemp(prefix="bench-runtime-profile-"))
    port = free_port()
    socket_path = scratch / "runtime.sock"
    if args.transport == "unix":
        runtime_url = f"unix://{socket_path}"
        serving = ["--socket", str(socket_path)]
    else:
        runtime_url, serving = f"http://127.0.0.1:{port}", ["--gunicorn", "1"]
    os.environ.update(
        DJANGO_SETTINGS_MODULE="docplatform.settings",
        DATABASE_URL=f"{args.postgres}/{args.database}?conn_max_age=60",
        SECRET_KEY=secrets.token_urlsafe(32),
        ENCRYPTION_KEYS=base64.urlsafe_b64encode(secrets.token_bytes(32)).decode(),
        RUNTIME_SIGNING_KEY=secrets.token_urlsafe(32),
        RUNTIME_URL=runtime_url,
        INTEGRATIONS_URL="http://integrations.testserver",
        ALLOWED_HOSTS="integrations.testserver,testserver",
        VAR_DIR=str(scratch),
        CELERY_BROKER_URL="filesystem://",
        # a personal token's 1,200 calls a minute would refuse the runs; the throttle's check
        # still runs at each call, its rate is not what is measured
        API_THROTTLE_USER="1000000/minute",
    )
    import django

    django.setup()
    from django.db import connection
    from django.test import Client
    from django.test.utils import CaptureQueriesContext
    from runtime_paths import setup_platform

    from docplatform.change_feed import feed
    from integrations.gateway import log_batches

    creation = connection.creation
    old_name = connection.settings_dict["NAME"]
    creation.create_test_db(verbosity=0, autoclobber=True)
    try:
        with ExitStack() as stack:
            host = start(
                stack,
                [sys.executable, "manage.py", "runtime_host", "--port", str(port), *serving],
                env={**os.environ, "RUNTIME_SANDBOX": args.sandbox},
                log=scratch / "runtime.log",
            )
            wait_for(f"http://127.0.0.1:{port}/health", host, scratch / "runtime.log")
            call = _caller(args.path, setup_platform(scratch), Client)

            for _ in range(200):
                call()
            with CaptureQueriesContext(connection) as queries:
                call()
            kinds = Counter(query["sql"].split()[0] for query in queries.captured_queries)
            wall_started, cpu_started = time.perf_counter(), time.process_time()
            with CpuMeter(
                {"host": lambda: [host.pid], "workers": lambda: process_tree(host.pid)[1:]}
            ) as meter:
                for _ in range(args.calls):
                    call()
            wall = (time.perf_counter() - wall_started) / args.calls * 1000
            cpu = (time.process_time() - cpu_started) / args.calls * 1000
            host_cpu, workers_cpu = (meter.used[name] / args.calls * 1000 for name in meter.used)
            profiler = cProfile.Profile(time.perf_counter if args.wall else time.process_time)
            profiler.enable()
            for _ in range(args.calls):
                call()
            profiler.disable()
        statements = " + ".join(f"{count} {kind}" for kind, count in kinds.items())
        print(
            f"{args.calls} serial calls of {args.path}, sandbox {args.sandbox}, "
            f"transport {args.transport}"
        )
        print(f"wall {wall:.2f} ms per call; web side CPU {cpu:.2f} ms; SQL: {statements}")
        print(f"runtime host CPU {host_cpu:.3f} ms per call, its workers {workers_cpu:.3f} ms")
        stats = pstats.Stats(profiler)
        if args.save:
            stats.dump_stats(args.save)
        stats.sort_stats("tottime").print_stats(args.top)
        stats.sort_stats("cumulative").print_stats(args.top)
    finally:
        log_batches.writer.close()  # its thread's connection would keep the database open
        feed.close()  # and the change feed's (kept installations)
        connection.close()
        creation.destroy_test_db(old_name, verbosity=0)
        shutil.rmtree(scratch, ignore_errors=True)


def _caller(path: str, data: dict, client_class):
    """One request of ``path`` through Django's test client, its answer checked."""
    if path == "endpoint":
        client = client_class(HTTP_HOST="integrations.testserver")
        url, body = f"/installations/{data['endpoint'].pk}/", None
    else:
        client = client_class(HTTP_AUTHORIZATION=f"Bearer {data['token']}")
        installation = data["in_space"].pk
        url = f"/api/v1/installations/{installation}/components/counter/render/"
        body = {"instance": "profile-render"}
        if path == "action":
            body = {"instance": "profile-action", "action": {"action": "increment"}}
        elif path == "api":
            url, body = f"/api/v1/installations/{installation}/", None

    def call():
        if body is None:
            answer = client.get(url)
        else:
            answer = client.post(url, body, content_type="application/json")
        assert answer.status_code == 200, (answer.status_code, answer.content[:300])

    return call


if __name__ == "__main__":
    main()
