"""The events API's pages at 100,000 events of one organization, on PostgreSQL: what the
database does for a page before and after the cursor pages (issue 33, item 5).

Before: ``limit``/``offset`` pages, each paying a ``COUNT(*)`` of the organization's events
and reading its page by the ``created_at`` index alone (``ORDER BY created_at DESC LIMIT 50
OFFSET n``). After: cursor pages (``docplatform.keyset``) on the ``(organization, created_at,
id)`` index of migration 0022: the first page, and one 90,000 events deep. Each query is run
under ``EXPLAIN (ANALYZE)`` ``--samples`` times; the plan's top scan and the median execution
time are printed, then the median time of ``GET /api/v1/orgs/<org>/events/`` (the whole
request through Django's test client) for the first and the deep page.

Run from a clone (PostgreSQL reachable; a scratch database ``test_bench_event_pages`` is made
and dropped)::

    PYTHONPATH=$PWD:$PWD/sdk .venv/bin/python benchmarks/event_pages.py \\
        --postgres postgres://postgres@127.0.0.1:5432
"""

import argparse
import base64
import os
import secrets
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DATABASE = "bench_event_pages"


def explain(cursor, sql: str, params, samples: int) -> tuple[str, float]:
    """The plan's first scan node and the median execution time (ms)."""
    times, scan = [], ""
    for _ in range(samples):
        cursor.execute(f"EXPLAIN (ANALYZE, FORMAT JSON) {sql}", params)
        plan = cursor.fetchone()[0][0]
        times.append(plan["Execution Time"])
        node = plan["Plan"]
        while "Scan" not in node["Node Type"] and node.get("Plans"):
            node = node["Plans"][0]
        scan = f"{node['Node Type']} on {node.get('Index Name') or node.get('Relation Name')}"
    return scan, statistics.median(times)


def request_ms(client, url: str, query: dict, samples: int) -> float:
    """The median time of the whole request (ms), through Django's test client."""
    times = []
    for _ in range(samples):
        started = time.perf_counter()
        assert client.get(url, query).status_code == 200
        times.append((time.perf_counter() - started) * 1000)
    return statistics.median(times)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--postgres", default="postgres://postgres@127.0.0.1:5432")
    parser.add_argument("--events", type=int, default=100_000)
    parser.add_argument("--samples", type=int, default=15)
    args = parser.parse_args()
    os.environ.update(
        DJANGO_SETTINGS_MODULE="docplatform.settings",
        DATABASE_URL=f"{args.postgres}/{DATABASE}",
        SECRET_KEY=secrets.token_urlsafe(32),
        ENCRYPTION_KEYS=base64.urlsafe_b64encode(secrets.token_bytes(32)).decode(),
        VAR_DIR=tempfile.mkdtemp(prefix="bench-event-pages-"),
        ALLOWED_HOSTS="testserver",
    )
    sys.path[:0] = [str(ROOT), str(ROOT / "sdk")]
    import django

    django.setup()
    from django.contrib.auth import get_user_model
    from django.db import connection
    from django.test import Client
    from django.test.utils import CaptureQueriesContext

    from docplatform.api.inputs import BoundedLimitOffsetPagination
    from docplatform.api.pagination import NewestFirstCursorPagination
    from docplatform.keyset import OLDER, cursor_encode
    from docplatform.models import Membership, Organization
    from docplatform.sites.api import EventListApi

    creation = connection.creation
    creation.create_test_db(verbosity=0, autoclobber=True)
    try:
        user = get_user_model().objects.create_user("bench", password=secrets.token_urlsafe())
        org = Organization.objects.create(title="Bench", subdomain="bench")
        other = Organization.objects.create(title="Other", subdomain="other")
        Membership.objects.create(organization=org, user=user, role="admin")
        with connection.cursor() as cursor:
            for organization, count in ((org, args.events), (other, args.events // 5)):
                cursor.execute(
                    "INSERT INTO docplatform_event (id, type, organization_id, payload, "
                    "created_at, traceparent, test) SELECT md5(random()::text || n::text), "
                    "CASE WHEN n %% 3 = 0 THEN 'site_view' ELSE 'space_view' END, %s, '{}', "
                    "now() - (n || ' seconds')::interval, '', false "
                    "FROM generate_series(1, %s) AS n",
                    [organization.pk, count],
                )
            cursor.execute("ANALYZE docplatform_event")
        print(f"{args.events} events of one organization, {args.events // 5} of another")

        deep = args.events * 9 // 10
        client = Client()
        client.force_login(user)
        url = f"/api/v1/orgs/{org.subdomain}/events/"
        with connection.cursor() as cursor:
            cursor.execute("DROP INDEX event_org_page_idx")
            cursor.execute("ANALYZE docplatform_event")
            print("\nbefore (limit/offset, no (organization, created_at, id) index):")
            where = "FROM docplatform_event WHERE organization_id = %s"
            for label, sql in (
                ("COUNT(*) of the organization's events", f"SELECT COUNT(*) {where}"),
                ("first page", f"SELECT * {where} ORDER BY created_at DESC LIMIT 50"),
                (
                    f"page at offset {deep}",
                    f"SELECT * {where} ORDER BY created_at DESC LIMIT 50 OFFSET {deep}",
                ),
            ):
                scan, ms = explain(cursor, sql, [org.pk], args.samples)
                print(f"  {label:40} {ms:8.2f} ms  {scan}")
        # The request as it was: the limit/offset paginator (its COUNT(*) and its page).
        EventListApi.pagination_class = BoundedLimitOffsetPagination
        for label, query in (("first page", {}), (f"offset {deep}", {"offset": deep})):
            print(f"  GET {label:36} {request_ms(client, url, query, args.samples):8.2f} ms")
        EventListApi.pagination_class = NewestFirstCursorPagination
        with connection.cursor() as cursor:
            cursor.execute(
                "CREATE INDEX event_org_page_idx ON docplatform_event "
                "(organization_id, created_at, id)"
            )
            cursor.execute("ANALYZE docplatform_event")

        deep_row = org.events.order_by("-created_at", "-id")[deep - 1]
        pages = {"first page": {}, f"page {deep} deep": {"cursor": cursor_encode(OLDER, deep_row)}}
        print("\nafter (cursor pages on (organization_id, created_at, id)):")
        for label, query in pages.items():
            with CaptureQueriesContext(connection) as queries:
                assert client.get(url, query).status_code == 200
            sql = next(q["sql"] for q in queries if "docplatform_event" in q["sql"])
            assert "COUNT(" not in " ".join(q["sql"] for q in queries).upper()
            with connection.cursor() as cursor:
                scan, ms = explain(cursor, sql, None, args.samples)
            print(f"  {label:40} {ms:8.2f} ms  {scan}")
        for label, query in pages.items():
            print(f"  GET {label:36} {request_ms(client, url, query, args.samples):8.2f} ms")
    finally:
        connection.close()
        creation.destroy_test_db(f"test_{DATABASE}", verbosity=0)


if __name__ == "__main__":
    main()
