"""``public_endpoint.py``'s breadth phase: many distinct integrations called in turn on one
runtime host, each through an installation's public endpoint.

As many integrations as the largest of ``--breadth`` (the same code, which answers its own
name; each a version and an installation of its own in the benchmark's organization) are
published and installed, and their setup events delivered (each installation's first call:
its worker started). Then every one is called once (the warm-up, reported apart), and then,
for each size N of ``--breadth`` (1, 16, 64, 100), the first N are called in turn, one
request at a time on a kept connection, ``--breadth-calls`` calls at least, in whole passes
over the N. Reported for each N: the p50, p99 and max of the calls, and how many workers
loaded code meanwhile (the runtime host's ``/health``: ``workers.loads``), each a cold start.
The goals (issue 35): the p50 at 100 within 2 times the p50 at 1, and no cold start after the
warm-up. Each integration is called again well within the host's
``RUNTIME_WORKER_IDLE_SECONDS`` (60 s: a pass over 100 takes about a second).
"""

import http.client
import json
import math
import statistics
import time
from pathlib import Path
from urllib.parse import urlsplit

import requests
from bench_processes import percentile

SIZES = (1, 16, 64, 100)
#: How long the installations' setup events may take to be delivered.
SETUP_SECONDS = 120
SCRIPT = """\
from docplatform_sdk import Response, create_integration


def fetch(request, context):
    return Response.json({"integration": context.environment["integration"]["name"]})


integration = create_integration(fetch=fetch)
"""
MANIFEST = """\
name: {name}
title: Bench breadth {number}
description: Answers its public endpoint with its name.
organization: bench
visibility: private
script: main.py
scopes: []
"""


def install(scratch: Path, data: dict, count: int) -> list[tuple[str, str]]:
    """Publish and install ``count`` integrations; each one's name and public endpoint path,
    once the installations' setup events are delivered (each one's first call: the worker of
    its installation loaded). Their code is the same, so publishing checks it once (the host
    caches the check)."""
    from runtime_paths import publish

    from docplatform.events.models import Delivery
    from integrations.models import Installation
    from integrations.services.installations import installation_create

    endpoints = []
    for number in range(count):
        name = f"bench-breadth-{number:03d}"
        manifest = MANIFEST.format(name=name, number=number)
        version = publish(scratch / name, manifest, SCRIPT, data["admin"])
        installation = installation_create(
            user=data["admin"],
            integration=version.integration,
            organization=data["organization"],
            space_selection=Installation.SpaceSelection.SELECTED,
        )
        endpoints.append((name, f"/installations/{installation.pk}/"))
    deadline = time.monotonic() + SETUP_SECONDS
    while Delivery.objects.filter(status__in=Delivery.OPEN_STATUSES).exists():
        if time.monotonic() > deadline:
            raise RuntimeError(f"the setup events were not delivered in {SETUP_SECONDS} s")
        time.sleep(0.2)
    return endpoints


def _loads(runtime: str) -> int:
    """How many workers of the runtime host have loaded a version's code so far."""
    return requests.get(f"{runtime}/health", timeout=10).json()["workers"]["loads"]


def measure(
    integrations: str, runtime: str, endpoints: list[tuple[str, str]], sizes, calls: int
) -> dict:
    """The warm-up's cold starts (s), and for each size its call times (s) and cold starts."""
    parts = urlsplit(integrations)
    client = http.client.HTTPConnection(parts.hostname, parts.port, timeout=30)

    def timed(name: str, path: str) -> float:
        started = time.perf_counter()
        client.request("GET", path)
        answer = client.getresponse()
        body = answer.read()
        elapsed = time.perf_counter() - started
        if answer.status != 200 or json.loads(body) != {"integration": name}:
            raise RuntimeError(f"{name}: {answer.status} {body[:200]!r}")
        return elapsed

    try:
        before = _loads(runtime)
        warm_up = [timed(name, path) for name, path in endpoints[: max(sizes)]]
        result = {"warm_up": warm_up, "warm_up_loads": _loads(runtime) - before, "sizes": {}}
        for size in sizes:
            chosen = endpoints[:size]
            before = _loads(runtime)
            times = [
                timed(name, path) for _ in range(math.ceil(calls / size)) for name, path in chosen
            ]
            result["sizes"][size] = {"times": times, "cold": _loads(runtime) - before}
    finally:
        client.close()
    return result


def report(breadth: dict) -> None:
    warm_up = [value * 1000 for value in breadth["warm_up"]]
    print(
        f"\nBreadth: distinct integrations called in turn, one request at a time (warm-up: "
        f"{len(warm_up)} first calls, {breadth['warm_up_loads']} workers loaded, median "
        f"{statistics.median(warm_up):.1f} ms, max {max(warm_up):.1f} ms)\n"
    )
    print(f"| {'integrations':>12} | {'calls':>5} | {'p50 ms':>7} | {'p99 ms':>7} "
          f"| {'max ms':>7} | {'cold starts':>11} |")  # fmt: skip
    print(f"| {'-' * 11}:| {'-' * 4}:| {'-' * 6}:| {'-' * 6}:| {'-' * 6}:| {'-' * 10}:|")
    p50 = {}
    for size, measured in breadth["sizes"].items():
        times = measured["times"]
        p50[size] = percentile(times, 0.5) * 1000
        print(
            f"| {size:>12} | {len(times):>5} | {p50[size]:>7.2f} "
            f"| {percentile(times, 0.99) * 1000:>7.2f} | {max(times) * 1000:>7.2f} "
            f"| {measured['cold']:>11} |"
        )
    smallest, largest = min(p50), max(p50)
    ratio = p50[largest] / p50[smallest]
    cold = sum(measured["cold"] for measured in breadth["sizes"].values())
    print(
        f"\np50 at {largest} / p50 at {smallest}: {ratio:.2f} (goal <= 2: "
        f"{'met' if ratio <= 2 else 'MISSED'}); cold starts after the warm-up: {cold} "
        f"(goal 0: {'met' if cold == 0 else 'MISSED'})"
    )
