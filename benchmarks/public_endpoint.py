"""The runtime's paths (issue 19) beside a bare Django view, in one run: an installation's
public endpoint under load and serially, a component's render and action, an event's dispatch
to its handler, and the cold start after a publish.

The platform runs as production does (the README's "Configuration"): gunicorn
(``docplatform.wsgi -w 2 -k gthread --threads 8``), ``DEBUG`` off, PostgreSQL with persistent
connections, Redis as the Celery broker, a Celery worker as the ``Procfile`` starts it
(``celery -A docplatform worker --queues default,webhooks,runtime --concurrency 2``), and the
runtime host as ``manage.py runtime_host --socket PATH`` (``--transport unix``, the default:
the web servers' ``RUNTIME_URL`` is ``unix://PATH``, frames on one persistent connection per
web process, the host's asyncio event loop) or ``manage.py runtime_host --gunicorn 1``
(``--transport http``: gthread, its own thread count, as before issue 35), one
process, because each host process keeps its own pools of integration workers
(``RUNTIME_WORKERS_MAX`` per version: the host's default, 4, unless ``--workers`` is given):
one process gives a known pool on this two-core machine. Integration code runs in
bubblewrap's sandbox; the shared cache (the API's throttles, sessions) is Redis
(``CACHE_URL``, the ``--redis`` database). One setting differs: ``API_THROTTLE_USER`` is
raised (1,200 a minute by default), or the serial component calls would be throttled. The
integrations are published and installed through the services
(``integration_publish_folder``, ``installation_create``), by an organization's admin.

Under load, ``--concurrency`` HTTP/1.1 keep-alive connections (one thread each), in
alternating rounds (bare, endpoint, unconfined, bare, ...) after a warm-up; requests per
second, p50 and p99 of:

bare        ``/bench/bare/``: a plain Django view (``public_endpoint_urls.py``, a benchmark-only
            URLconf) answering ``{"message": "Hello, bench!"}``: what the web server and
            Django cost alone, the goals' reference.
endpoint    ``{INTEGRATIONS_URL}/installations/{id}/``, the same body from the integration's
            ``fetch``: the platform reads the installation, builds and signs the envelope,
            POSTs it to the runtime host, which hands it to a pre-started, sandboxed worker;
            the answer is relayed back.
unconfined  the same through a second web server and runtime host whose workers run
            unconfined (``RUNTIME_SANDBOX=off``): what the sandbox costs is the difference.

Then, on the sandboxed platform (``runtime_paths.py``):

serial      one keep-alive connection, one request at a time: ``--serial`` each (after 50
            of each as warm-up) of the bare view, the endpoint, a component render, a
            component action and an API read, in blocks of ``--serial-block`` in a row,
            taking turns; medians.
render      ``POST /api/v1/installations/{id}/components/counter/render/`` with the admin's
            personal API token, a counter block of a space's integration, no action: one
            runtime call, the state read and unchanged.
action      the same with ``{"action": "increment"}``: the action and the render in one
            runtime call, the new state stored.
api         for comparison, ``GET /api/v1/installations/{id}/`` with the same token: the
            API's cost without a runtime call.
events      ``--events`` ``space_content_updated`` events, one at a time, fired with
            ``docplatform.events.fire`` in a transaction in this process; the integration's
            handler prints the time it ran (its log line's output). Reported: from just before
            ``fire`` to the handler's run (the commit, Redis, the Celery worker's claim, its
            call to the runtime host), and the runtime call's own duration (the log line's).
fairness    (``fairness_phase.py``) a third web server sends a second integration's public
            endpoint calls to the same runtime host, 32 connections back to back, its
            ``fetch`` waiting 20 ms: the endpoint's serial p50 (``--serial`` / 2 calls)
            alone and meanwhile; the goal is at most 2 times.
cold start  ``--cold-starts`` times: a new version of the endpoint's integration published
            (its message changed; untimed), then its first ``GET``: the envelope, the host's
            409 ``bundle_required``, the envelope again with the bundle, a worker taken (a
            spare) and the code loaded. Median and max.
breadth     (``breadth_phase.py``) 100 integrations, each installed, called once each (the
            warm-up), then the first 1, 16, 64 and 100 (``--breadth``) called in turn, one
            request at a time, ``--breadth-calls`` calls each at least: p50, p99, max, and
            the cold starts the host counted; the goals are the p50 at 100 within 2 times the
            p50 at 1, and no cold start after the warm-up.

The report (``public_endpoint_report.py``) ends with one table, each figure beside its goal:
the endpoint's requests per second at least 0.33 of the bare view's, its p50 at most 3 times
the bare view's, serially at most 3 ms above it; the cold start under 60 ms (median); render
and action at most 5 ms above the bare view serially. The machine is shared: figures move
from run to run.

From a fresh clone:

    make install
    .venv/bin/python benchmarks/public_endpoint.py [--concurrency 8] [--seconds 10] \
        [--rounds 3] [--serial 500] [--events 50] [--cold-starts 10] \
        [--breadth 1,16,64,100] [--breadth-calls 300] [--profile DIR] [--against PATH]

``--against PATH`` adds a fourth contender to the load's rounds: the public endpoint served
by another checkout's code (a web server and a sandboxed runtime host started from PATH, on
the same database, so the two must have the same migrations), taking its turn with the
others; the report adds its row and its ratio to this checkout's. The machine's drift
between two runs (a tenth of the rate) is larger than most single changes: this compares
them in one.

Needs PostgreSQL (``--postgres``, trust auth) and Redis (``--redis``, database 11 by default,
which must be empty) on 127.0.0.1, and bubblewrap (``bwrap``). The benchmark creates and drops
a database of its own (``test_bench_public_endpoint``, or ``test_`` and ``--database``),
empties its Redis database at the end, and stops every process it started (also on an error,
Ctrl-C, SIGTERM or ``--timeout``). About 5 minutes.
"""

import argparse
import base64
import os
import secrets
import shutil
import signal
import sys
import tempfile
import time
from contextlib import ExitStack
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path[:0] = [str(ROOT), str(HERE)]

import breadth_phase
import fairness_phase
import requests
import runtime_paths
from bench_processes import (
    CpuMeter,
    free_port,
    load,
    start,
    start_profilers,
    stop_profilers,
)
from platform_servers import WEB, start_platform, start_web
from public_endpoint_report import report

DATABASE = "bench_public_endpoint"  # create_test_db() makes test_bench_public_endpoint
#: The Procfile's worker.
CELERY_WORKER = ["worker", "--queues", "default,webhooks,runtime", "--concurrency", "2"]


def expecting(expected: bytes):
    """An answer check: 200 with exactly ``expected``."""

    def check(status: int, body: bytes) -> str | None:
        return None if status == 200 and body == expected else f"{status} {body[:200]!r}"

    return check


def claim_redis(url: str):
    """A client of the Redis database, refused when it holds keys (emptied at the end)."""
    import redis

    client = redis.Redis.from_url(url)
    if client.dbsize():
        raise SystemExit(f"{url} is not empty: give an empty Redis database with --redis")
    return client


class Stopped(Exception):
    """SIGTERM, or the run's time bound (SIGALRM)."""


def _stop(signum, frame):
    raise Stopped(signal.Signals(signum).name)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--postgres", default="postgres://postgres@127.0.0.1:5432")
    parser.add_argument("--redis", default="redis://127.0.0.1:6379/11", help="the broker")
    parser.add_argument(
        "--database", default=DATABASE, help="the name its database is made from (test_NAME)"
    )
    parser.add_argument("--concurrency", type=int, default=8, help="client connections")
    parser.add_argument("--seconds", type=float, default=10, help="length of each round")
    parser.add_argument("--rounds", type=int, default=3, help="rounds per contender")
    parser.add_argument(
        "--workers", type=int, help="integration workers per version (default: the host's)"
    )
    parser.add_argument("--serial", type=int, default=500, help="serial requests of each kind")
    parser.add_argument("--serial-block", type=int, default=50, help="of one kind in a row")
    parser.add_argument("--events", type=int, default=50, help="events dispatched (0: none)")
    parser.add_argument("--cold-starts", type=int, default=10, help="publishes and first calls")
    parser.add_argument("--cold-pause", type=float, default=2, help="seconds before each")
    parser.add_argument(
        "--breadth",
        default=",".join(map(str, breadth_phase.SIZES)),
        help="how many distinct integrations to call in turn, comma-separated (none: '')",
    )
    parser.add_argument("--breadth-calls", type=int, default=300, help="calls of each size")
    parser.add_argument("--timeout", type=float, help="give up after this many seconds")
    parser.add_argument(
        "--transport",
        choices=("unix", "http"),
        default="unix",
        help="how the web servers reach the runtime host: frames on a Unix socket (the "
        "host's event loop) or HTTP (the host under gunicorn)",
    )
    parser.add_argument(
        "--against",
        type=Path,
        help="another checkout (PATH, with its SDK; same migrations): its sandboxed endpoint "
        "in the same rounds, for a before and after on one machine at one time",
    )
    parser.add_argument(
        "--profile",
        type=Path,
        help="record the sandboxed web server and runtime host with py-spy during the first "
        "endpoint round (its figures include py-spy's share): DIR/web.txt, DIR/runtime-host.txt; "
        "and during the serial requests: DIR/serial/web.txt, DIR/serial/runtime-host.txt",
    )
    parser.add_argument("--web-workers", type=int, default=WEB["workers"], help="gunicorn's")
    parser.add_argument("--web-threads", type=int, default=WEB["threads"], help="each")
    args = parser.parse_args()
    if args.against and not (args.against / "manage.py").is_file():
        parser.error(f"--against {args.against}: not a checkout of this project (no manage.py)")
    WEB.update(workers=args.web_workers, threads=args.web_threads)
    timeout = args.timeout or 3 * args.rounds * args.seconds + 720
    signal.signal(signal.SIGTERM, _stop)
    signal.signal(signal.SIGALRM, _stop)
    signal.alarm(int(timeout))

    broker = claim_redis(args.redis)
    scratch = Path(tempfile.mkdtemp(prefix="bench-public-endpoint-"))
    ports = {sandbox: (free_port(), free_port()) for sandbox in ("bwrap", "off")}
    os.environ.update(
        DJANGO_SETTINGS_MODULE="docplatform.settings",
        DEBUG="false",
        DATABASE_URL=f"{args.postgres}/{args.database}",
        SECRET_KEY=secrets.token_urlsafe(32),
        ENCRYPTION_KEYS=base64.urlsafe_b64encode(secrets.token_bytes(32)).decode(),
        RUNTIME_SIGNING_KEY=secrets.token_urlsafe(32),
        VAR_DIR=str(scratch),
        CELERY_BROKER_URL=args.redis,
        # Publishing loads the code in a runtime host to check it: the sandboxed one.
        RUNTIME_URL=f"http://127.0.0.1:{ports['bwrap'][1]}",
    )
    import django

    django.setup()
    from django.db import connection

    creation = connection.creation
    old_name = connection.settings_dict["NAME"]
    started_at, load_before = time.strftime("%Y-%m-%d %H:%M:%S"), os.getloadavg()
    creation.create_test_db(verbosity=0, autoclobber=True)
    try:
        with ExitStack() as stack:
            database_url = f"{args.postgres}/{connection.settings_dict['NAME']}?conn_max_age=60"
            env = {
                **os.environ,
                "PYTHONPATH": os.pathsep.join([str(ROOT), str(HERE)]),
                "DJANGO_SETTINGS_MODULE": "public_endpoint_settings",
                "DATABASE_URL": database_url,
                "API_THROTTLE_USER": "1000000/minute",
                # the cache every web process shares is Redis, as the README's production
                # configuration says (the embedded default's is the database)
                "CACHE_URL": args.redis,
                "CACHE_KEY_PREFIX": "bench-cache",
            }
            platforms = {
                sandbox: start_platform(
                    stack, scratch, env, sandbox, args.workers, ports[sandbox], args.transport
                )
                for sandbox in ("bwrap", "off")
            }
            if args.against:  # the other checkout's code, sandboxed, on the same database
                platforms["against"] = start_platform(
                    stack, scratch, env, "bwrap", args.workers, (free_port(), free_port()),
                    args.transport, root=args.against.resolve(), name="against",
                )  # fmt: skip
            sandboxed = platforms["bwrap"]
            celery = str(Path(sys.executable).parent / "celery")
            worker = start(
                stack,
                [celery, "-A", "docplatform", *CELERY_WORKER, "--loglevel", "INFO"],
                env=sandboxed["env"],
                log=scratch / "celery.log",
            )
            data = runtime_paths.setup_platform(scratch)
            connection.close()
            endpoint = f"/installations/{data['endpoint'].pk}/"
            urls = {
                "bare": f"{sandboxed['web']}/bench/bare/",
                "endpoint": sandboxed["integrations"] + endpoint,
                "unconfined": platforms["off"]["integrations"] + endpoint,
            }
            if args.against:
                urls["against"] = platforms["against"]["integrations"] + endpoint
            bodies = {name: requests.get(url, timeout=20).content for name, url in urls.items()}
            assert len(set(bodies.values())) == 1, bodies
            results = {name: ([], [], {}) for name in urls}
            meters = {"bare": sandboxed, "endpoint": sandboxed, "unconfined": platforms["off"]}
            meters["against"] = platforms.get("against")
            for name, url in urls.items():  # warm-up: connections, pools, code paths
                load(url, expecting(bodies[name]), args.concurrency, 2)
            for round_number in range(args.rounds):
                for name, url in urls.items():
                    profiled = name == "endpoint" and round_number == 0
                    profilers = start_profilers(args.profile if profiled else None,
                                                sandboxed["profiled"])  # fmt: skip
                    with CpuMeter(meters[name]["cpu"]) as meter:
                        latencies, rate = load(
                            url, expecting(bodies[name]), args.concurrency, args.seconds
                        )
                    stop_profilers(profilers)
                    results[name][0].extend(latencies)
                    results[name][1].append(rate)
                    for group, used in meter.used.items():
                        results[name][2][group] = results[name][2].get(group, 0.0) + used
            print("load done; serially ...", file=sys.stderr)
            client = runtime_paths.SerialClient(
                sandboxed["web"], sandboxed["integrations"], data, bodies["bare"]
            )
            client.rounds(50, 50)  # warm-up; the component instances made
            profilers = start_profilers(args.profile and args.profile / "serial",
                                        sandboxed["profiled"])  # fmt: skip
            serial = client.rounds(args.serial, args.serial_block)
            stop_profilers(profilers)
            client.close()
            events = {}
            if args.events:
                print("events ...", file=sys.stderr)
                try:  # warm-up: the worker up, its connections, the integration's pool
                    runtime_paths.dispatch_one(data, -1, timeout=60)
                except RuntimeError:
                    if worker.poll() is not None:
                        log = (scratch / "celery.log").read_text()[-3000:]
                        raise RuntimeError(f"the Celery worker exited:\n{log}") from None
                    raise
                runtime_paths.dispatch(data, 5, 0.05)
                events = runtime_paths.dispatch(data, args.events, 0.05)
            print("cold starts ...", file=sys.stderr)
            cold = runtime_paths.cold_starts(
                data, sandboxed["integrations"], args.cold_starts, args.cold_pause
            )
            sizes = [int(size) for size in args.breadth.split(",") if size]
            breadth = None
            if sizes:
                print("breadth ...", file=sys.stderr)
                endpoints = breadth_phase.install(scratch, data, max(sizes))
                connection.close()
                breadth = breadth_phase.measure(
                    sandboxed["integrations"],
                    sandboxed["runtime"],
                    endpoints,
                    sizes,
                    args.breadth_calls,
                )
            print("fairness ...", file=sys.stderr)
            hammered = fairness_phase.install_hammered(scratch, data)
            connection.close()
            hammer_port = free_port()
            start_web(stack, scratch, sandboxed["env"], hammer_port, "hammer")
            fairness = fairness_phase.measure(
                sandboxed["integrations"] + endpoint,
                f"http://localhost:{hammer_port}{hammered}",
                args.serial // 2,
            )
        signal.alarm(0)
        hosts = {name: platform["host"] for name, platform in platforms.items()}
        report(args, results, serial, events, cold, fairness, started_at, load_before, hosts)
        if breadth is not None:
            breadth_phase.report(breadth)
    finally:
        signal.alarm(0)
        connection.close()
        creation.destroy_test_db(old_name, verbosity=0)
        broker.flushdb()
        broker.close()
        shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    main()
