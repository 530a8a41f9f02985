"""Where the time of firing one event goes, in the process that fires it.

The webhook delivery benchmark's case: `space_content_updated` fired with
`docplatform.events.fire` in a transaction, to one webhook installation, then committed (the
after-commit hook requests a drain). Measured twice: a **burst** (a drain is running: the
drain request flag is set, the commit only checks it) and **one at a time** (the flag is clear
each time: the commit also publishes a drain, as at 20 events/s). For each: CPU and wall ms
per event, the SQL statements per event, and the share of the CPU (cProfile, process time) of
each part: routing (`integrations.routing_selectors.event_routing`), the consumer's check
(`endpoint_wants`), writing the event and its deliveries, committing, and the after-commit
queueing (the flag and the publish).

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/test \\
    CELERY_BROKER_URL=redis://127.0.0.1:6379/12 .venv/bin/python benchmarks/firing_profile.py

It works in a database of its own (created and dropped) and purges what it queued.
"""

import base64
import cProfile
import os
import pstats
import secrets
import sys
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "docplatform.settings")
os.environ.setdefault("SECRET_KEY", secrets.token_urlsafe(40))
os.environ.setdefault("ENCRYPTION_KEYS", base64.urlsafe_b64encode(secrets.token_bytes(32)).decode())
os.environ.setdefault("RUNTIME_SIGNING_KEY", secrets.token_urlsafe(32))
os.environ.setdefault("WEBHOOK_ALLOWED_NETWORKS", "127.0.0.0/8")

import django

django.setup()

from django.contrib.auth import get_user_model
from django.db import connection, transaction
from django.test.utils import CaptureQueriesContext

from docplatform import events
from docplatform.celery import app
from docplatform.events.models import DrainRequest
from docplatform.models import Membership, Organization, Revision, Space
from integrations.models import Integration
from integrations.services.installations import installation_create

EVENTS = 500
#: (label, the function whose cumulative CPU is the part's), in the order they run.
PARTS = [
    ("routing", "event_routing"),
    ("consumer's check", "endpoint_wants"),
    ("writing the event and its deliveries", "event_insert"),
    ("commit", "commit"),
    ("after commit", "_enqueue_after_commit"),
]


def setup():
    organization = Organization.objects.create(subdomain="bench", title="Bench")
    admin = get_user_model().objects.create(username="bench-admin")
    Membership.objects.create(organization=organization, user=admin, role="admin")
    space = Space.objects.create(organization=organization, title="Bench space")
    space.current_revision = Revision.objects.create(space=space, message="first")
    space.save(update_fields=["current_revision"])
    installation = installation_create(
        user=admin,
        integration=Integration.objects.get(name="webhook"),
        organization=organization,
        space=space,
        configuration={"url": "http://127.0.0.1:9/hooks", "space_content_updated": True},
    )
    assert installation.status == "active", installation.status
    return organization, space


def measure(label, organization, space, *, flag_clear: bool):
    payload = {"spaceId": space.id, "revisionId": space.current_revision_id}

    def fire_one():
        if flag_clear:  # (not measured: a drain that caught up clears it)
            DrainRequest.objects.filter(consumer="webhook").update(requested_at=None)
        with transaction.atomic():
            events.fire("space_content_updated", organization=organization, space=space, **payload)

    def run(profiler=None):
        cpu, wall = 0.0, 0.0
        for _ in range(EVENTS):
            if flag_clear:
                DrainRequest.objects.filter(consumer="webhook").update(requested_at=None)
            started, started_cpu = time.perf_counter(), time.process_time()
            if profiler:
                profiler.enable()
            with transaction.atomic():
                events.fire(
                    "space_content_updated", organization=organization, space=space, **payload
                )
            if profiler:
                profiler.disable()
            wall += time.perf_counter() - started
            cpu += time.process_time() - started_cpu
        return cpu / EVENTS * 1000, wall / EVENTS * 1000

    for _ in range(50):
        fire_one()
    with CaptureQueriesContext(connection) as queries:
        fire_one()
    kinds = Counter(query["sql"].split()[0] for query in queries.captured_queries)
    if flag_clear:
        kinds["UPDATE"] -= 1  # the clearing
    cpu, wall = run()
    profiler = cProfile.Profile(time.process_time)
    run(profiler)
    stats = pstats.Stats(profiler).stats
    total = sum(own for _, _, own, _, _ in stats.values())
    shares = []
    for part, function in PARTS:
        cumulative = max(
            (cum for (file, _, name), (_, _, _, cum, _) in stats.items() if name == function),
            default=0.0,
        )
        shares.append(f"{part} {cumulative / total * 100:.0f} %")
    statements = " + ".join(f"{count} {kind}" for kind, count in kinds.items() if count)
    print(f"{label}: {cpu:.2f} ms CPU, {wall:.2f} ms wall per event; {statements}")
    print(f"    CPU shares (cProfile): {', '.join(shares)}")


def main():
    creation = connection.creation
    old_name = connection.settings_dict["NAME"]
    creation.create_test_db(verbosity=0, autoclobber=True)
    try:
        organization, space = setup()
        print(f"database: {connection.vendor}, broker: {app.conf.broker_url.split('://')[0]}")
        measure("burst (a drain runs)", organization, space, flag_clear=False)
        measure("one at a time (a drain is sent)", organization, space, flag_clear=True)
    finally:
        app.control.purge()
        creation.destroy_test_db(old_name, verbosity=0)


if __name__ == "__main__":
    main()
