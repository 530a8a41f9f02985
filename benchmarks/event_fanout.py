"""How the cost of firing one event grows with the installations it reaches.

For 10, 100, 1,000 and 10,000 recipients (integrations installed on one space, plus
organization-wide installations: a tenth of them), fire `space_content_updated` through the
platform's own `docplatform.events.fire` in a transaction, commit (which queues the
deliveries), and record the time per event and the number of database queries.

Run it against the database and broker you want to measure, e.g.
    DATABASE_URL=postgres://postgres@127.0.0.1:5432/test \
    CELERY_BROKER_URL=redis://127.0.0.1:6379/0 .venv/bin/python benchmarks/event_fanout.py
It works in a database of its own (created and dropped, like Django's test database) and
purges what it queued from the broker. The setup writes rows in bulk: only firing is measured.
"""

import base64
import os
import secrets
import statistics
import sys
import time
import uuid
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "docplatform.settings")
# Keys of this run's own: with DEBUG off the platform derives none.
os.environ.setdefault("SECRET_KEY", secrets.token_urlsafe(40))
os.environ.setdefault("ENCRYPTION_KEYS", base64.urlsafe_b64encode(secrets.token_bytes(32)).decode())
os.environ.setdefault("RUNTIME_SIGNING_KEY", secrets.token_urlsafe(32))

import django

django.setup()

from django.db import connection, transaction
from django.test.utils import CaptureQueriesContext

from docplatform import events
from docplatform.celery import app
from docplatform.models import Organization, Space
from integrations.models import Installation, Integration

SIZES = [10, 100, 1_000, 10_000]
REPEATS = 7


def make_recipients(organization, space, count):
    """`count` installations that receive the space's events: 90 % in the space, 10 % org-wide."""
    Integration.objects.all().delete()
    org_wide = count // 10
    integrations = Integration.objects.bulk_create(
        Integration(
            name=f"bench-{count}-{i}",
            organization=organization,
            title=f"Bench {i}",
            description="benchmark",
            visibility="public",
            scopes=["space:content:read"],
        )
        for i in range(count)
    )
    parents = Installation.objects.bulk_create(
        Installation(
            integration=integration,
            organization=organization,
            level="organization",
            status="active",
            space_selection="all" if i < org_wide else "selected",
            api_token_hash=uuid.uuid4().hex,
            api_token="x",
            granted_scopes=["space:content:read"],
        )
        for i, integration in enumerate(integrations)
    )
    Installation.objects.bulk_create(
        Installation(
            integration=integration,
            organization=organization,
            level="space",
            parent=parent,
            space=space,
            status="active",
            api_token_hash=uuid.uuid4().hex,
            api_token="x",
            granted_scopes=["space:content:read"],
        )
        for i, (integration, parent) in enumerate(zip(integrations, parents, strict=True))
        if i >= org_wide
    )


def fire_once(organization, space):
    with CaptureQueriesContext(connection) as queries:
        started = time.perf_counter()
        with transaction.atomic():
            event = events.fire(
                "space_content_updated",
                organization=organization,
                space=space,
                spaceId=space.id,
                revisionId="r",
            )
        elapsed = time.perf_counter() - started
    return elapsed, len(queries), event.deliveries.count()


def main():
    creation = connection.creation
    old_name = connection.settings_dict["NAME"]
    creation.create_test_db(verbosity=0, autoclobber=True)
    try:
        organization = Organization.objects.create(subdomain="bench", title="Bench")
        space = Space.objects.create(organization=organization, title="Bench space")
        print(f"database: {connection.vendor}, broker: {app.conf.broker_url.split('://')[0]}")
        print(f"{'recipients':>10} {'ms/event p50':>13} {'ms/event min':>13} {'queries':>8}")
        for size in SIZES:
            make_recipients(organization, space, size)
            if connection.vendor == "postgresql":
                with connection.cursor() as cursor:
                    cursor.execute("ANALYZE")  # as autovacuum would after a bulk load
            fire_once(organization, space)  # warm up
            runs = [fire_once(organization, space) for _ in range(REPEATS)]
            reached = {run[2] for run in runs}
            assert reached == {size}, f"expected {size} recipients, got {reached}"
            times = [run[0] * 1000 for run in runs]
            queries = sorted({run[1] for run in runs})
            print(
                f"{size:>10} {statistics.median(times):>13.1f} {min(times):>13.1f} "
                f"{'/'.join(map(str, queries)):>8}"
            )
    finally:
        app.control.purge()
        creation.destroy_test_db(old_name, verbosity=0)


if __name__ == "__main__":
    main()
