"""The round trip of an installation's public endpoint, beside a bare Django view, in one run.

Three contenders answer the same ``GET`` with the same body (``{"message": "Hello, bench!"}``,
``application/json``), each from the platform under gunicorn (``docplatform.wsgi -w 2 -k
gthread --threads 8``, PostgreSQL with persistent connections):

endpoint    ``{INTEGRATIONS_URL}/installations/{id}/``: the platform reads the installation,
            builds and signs the envelope, POSTs it to the runtime host, which hands it to a
            pre-started, sandboxed worker (bubblewrap) running the integration's ``fetch``;
            the answer is relayed back.
unconfined  the same through a second web server and runtime host whose workers run
            unconfined (``RUNTIME_SANDBOX=off``): what the sandbox costs is the difference.
bare        ``/bench/bare/``: a plain Django view (``public_endpoint_urls.py``, a benchmark-only
            URLconf), the limit: what the web server and Django cost alone.

The runtime host is ``manage.py runtime_host --gunicorn 1``: gunicorn (gthread, 16 threads) as
in production, keeping its connections to the platform alive, and one process, because each
host process keeps its own pool of integration workers (``RUNTIME_WORKERS_PER_VERSION``, 2):
one process gives a known pool on this two-core machine.

A client in this process keeps ``--concurrency`` HTTP/1.1 connections busy (one thread each),
in alternating rounds (bare, endpoint, unconfined, bare, ...) after a warm-up, and reports the
requests per second and the p50 and p99 latency of each, and their ratio.

    .venv/bin/python benchmarks/public_endpoint.py [--concurrency 8] [--seconds 10] [--rounds 3]

Needs PostgreSQL (``--postgres``, trust auth) on 127.0.0.1; the benchmark creates and drops a
database of its own (``test_bench_public_endpoint``) and stops every process it started.
"""

import argparse
import base64
import os
import secrets
import shutil
import statistics
import sys
import tempfile
from contextlib import ExitStack
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path[:0] = [str(ROOT), str(HERE)]

import requests
from bench_processes import free_port, load, percentile, start, wait_for

DATABASE = "bench_public_endpoint"  # create_test_db() makes test_bench_public_endpoint
SCRIPT = """\
from docplatform_sdk import Response, create_integration


def fetch(request, context):
    return Response.json({"message": "Hello, bench!"})


integration = create_integration(fetch=fetch)
"""
MANIFEST = """\
name: bench-endpoint
title: Bench endpoint
description: Answers its public endpoint.
organization: bench
visibility: private
script: main.py
scopes: []
"""


def start_platform(stack: ExitStack, scratch: Path, database_url: str, sandbox: str) -> dict:
    """A web server (gunicorn) and its runtime host, whose workers run in ``sandbox``."""
    web_port, runtime_port = free_port(), free_port()
    web, runtime = f"http://127.0.0.1:{web_port}", f"http://127.0.0.1:{runtime_port}"
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(ROOT), str(HERE)]),
        "DJANGO_SETTINGS_MODULE": "public_endpoint_settings",
        "DATABASE_URL": database_url,
        "PLATFORM_URL": web,
        "INTEGRATIONS_URL": f"http://localhost:{web_port}",
        "RUNTIME_URL": runtime,
    }
    host = start(
        stack,
        [sys.executable, "manage.py", "runtime_host", "--gunicorn", "1"],
        env={**env, "RUNTIME_WORKERS_PER_VERSION": "2", "RUNTIME_SANDBOX": sandbox},
        log=scratch / f"runtime-{sandbox}.log",
    )
    server = start(
        stack,
        [str(Path(sys.executable).parent / "gunicorn"), "docplatform.wsgi",
         "--bind", f"127.0.0.1:{web_port}",
         "--workers", "2", "--worker-class", "gthread", "--threads", "8"],
        env=env,
        log=scratch / f"web-{sandbox}.log",
    )  # fmt: skip
    wait_for(f"{runtime}/health", host, scratch / f"runtime-{sandbox}.log")
    wait_for(f"{web}/bench/bare/", server, scratch / f"web-{sandbox}.log")
    return {"web": web, "integrations": f"http://localhost:{web_port}", "runtime": runtime}


def setup_platform(folder: Path) -> str:
    """An organization, its admin, the integration published and installed; its id."""
    from django.contrib.auth import get_user_model

    from docplatform.services import organization_create
    from integrations.services import integration_publish
    from integrations.services.installations import installation_create

    admin = get_user_model().objects.create_user("bench-admin")
    organization = organization_create(subdomain="bench", title="Bench", admin=admin)
    (folder / "service-manifest.yaml").write_text(MANIFEST)
    (folder / "main.py").write_text(SCRIPT)
    integration = integration_publish(path=folder, publisher=admin).version.integration
    installation = installation_create(
        user=admin, integration=integration, organization=organization
    )
    return installation.id


def expecting(expected: bytes):
    """An answer check: 200 with exactly ``expected``."""

    def check(status: int, body: bytes) -> str | None:
        return None if status == 200 and body == expected else f"{status} {body[:200]!r}"

    return check


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--postgres", default="postgres://postgres@127.0.0.1:5432")
    parser.add_argument("--concurrency", type=int, default=8, help="client connections")
    parser.add_argument("--seconds", type=float, default=10, help="length of each round")
    parser.add_argument("--rounds", type=int, default=3, help="rounds per contender")
    args = parser.parse_args()

    scratch = Path(tempfile.mkdtemp(prefix="bench-public-endpoint-"))
    os.environ.update(
        DJANGO_SETTINGS_MODULE="docplatform.settings",
        DATABASE_URL=f"{args.postgres}/{DATABASE}",
        SECRET_KEY=secrets.token_urlsafe(32),
        ENCRYPTION_KEYS=base64.urlsafe_b64encode(secrets.token_bytes(32)).decode(),
        RUNTIME_SIGNING_KEY=secrets.token_urlsafe(32),
        VAR_DIR=str(scratch),  # the setup's events queue into a broker folder of its own
        CELERY_BROKER_URL="filesystem://",
    )
    import django

    django.setup()
    from django.db import connection

    creation = connection.creation
    old_name = connection.settings_dict["NAME"]
    creation.create_test_db(verbosity=0, autoclobber=True)
    database_url = f"{args.postgres}/{connection.settings_dict['NAME']}?conn_max_age=60"
    try:
        with ExitStack() as stack:
            platforms = {
                sandbox: start_platform(stack, scratch, database_url, sandbox)
                for sandbox in ("bwrap", "off")
            }
            # Publishing loads the code in a runtime host to check it: the sandboxed one.
            from django.conf import settings

            settings.RUNTIME_URL = platforms["bwrap"]["runtime"]
            installation_id = setup_platform(scratch)
            connection.close()
            endpoint = f"/installations/{installation_id}/"
            urls = {
                "bare": f"{platforms['bwrap']['web']}/bench/bare/",
                "endpoint": platforms["bwrap"]["integrations"] + endpoint,
                "unconfined": platforms["off"]["integrations"] + endpoint,
            }
            bodies = {name: requests.get(url, timeout=20).content for name, url in urls.items()}
            assert bodies["bare"] == bodies["endpoint"], bodies
            results = {name: ([], []) for name in urls}
            for name, url in urls.items():  # warm-up: connections, pools, code paths
                load(url, expecting(bodies[name]), args.concurrency, 2)
            for _ in range(args.rounds):
                for name, url in urls.items():
                    latencies, rate = load(
                        url, expecting(bodies[name]), args.concurrency, args.seconds
                    )
                    results[name][0].extend(latencies)
                    results[name][1].append(rate)
        report(args, results)
    finally:
        connection.close()
        creation.destroy_test_db(old_name, verbosity=0)
        shutil.rmtree(scratch, ignore_errors=True)


def report(args, results: dict) -> None:
    rows = {}
    for name, (latencies, rates) in results.items():
        rows[name] = (
            len(latencies),
            statistics.mean(rates),
            percentile(latencies, 0.50) * 1000,
            percentile(latencies, 0.99) * 1000,
        )
    print(
        f"PostgreSQL, gunicorn web -w 2 gthread x8, runtime host gunicorn x1 (2 integration "
        f"workers, bubblewrap or unconfined); {args.concurrency} connections, {args.rounds} "
        f"rounds of {args.seconds:g} s"
    )
    print(f"| {'contender':<28} | {'requests':>8} | {'req/s':>7} | {'p50 ms':>7} | {'p99 ms':>7} |")
    print(f"| {'-' * 28} | {'-' * 8}:| {'-' * 6}:| {'-' * 6}:| {'-' * 6}:|")
    labels = {
        "bare": "bare Django view",
        "endpoint": "public endpoint, sandboxed",
        "unconfined": "public endpoint, unconfined",
    }
    for name, (count, rate, p50, p99) in rows.items():
        print(f"| {labels[name]:<28} | {count:>8} | {rate:>7.0f} | {p50:>7.2f} | {p99:>7.2f} |")
    for label, top, bottom in [
        ("sandboxed / bare", "endpoint", "bare"),
        ("sandboxed / unconfined", "endpoint", "unconfined"),
    ]:
        a, b = rows[top], rows[bottom]
        print(
            f"| {'ratio ' + label:<28} | {'':>8} | {a[1] / b[1]:>7.2f} "
            f"| {a[2] / b[2]:>7.2f} | {a[3] / b[3]:>7.2f} |"
        )


if __name__ == "__main__":
    main()
