"""What a space's size costs: the same work on spaces of 10, 100, 1,000 and 10,000 pages, on
PostgreSQL, and the ratio of the largest to the smallest (issue 33's goal: within 2x).

For each size, a space of that many pages (~1 KB of Markdown each, in sections of 100 under a
top page each, as documentation is laid out) is written through ``space_content_update`` and
published on a site, untimed, and the database's statistics brought up to date (``ANALYZE``,
as autovacuum does after a bulk write); then, ``--samples`` times each, medians:

save        ``documents.services.page_save`` of one page, from the current revision, as the
            editor saves; with the rows it wrote (page versions added and ended: the goal is
            one and one, whatever the size) and the statements it ran.
reader      the first read of a page in the reader (``GET /s/<space>/<path>``, a member signed
            in), a page not read before (its rendering not cached), after one read of another
            page of the revision (its navigation cached, as it is for every read but the
            first after a save); with the response's size.
site        a page of the published site (``GET /<site>/<space>/<path>`` on the sites origin),
            warm, anonymous.
search      the site's search for a word every page holds (``GET /<site>/search?q=``).

Requests go through Django's test client in this process (the whole middleware and view
stack, no network), one at a time.

From a fresh clone:

    make install
    .venv/bin/python benchmarks/content_growth.py [--sizes 10,100,1000,10000] [--samples 15]

Needs PostgreSQL on 127.0.0.1 (trust auth, user ``postgres``); the benchmark creates and drops
a database of its own (``test_bench_content``).
"""

import argparse
import base64
import os
import secrets
import statistics
import sys
import time
from pathlib import Path
from urllib.parse import urlsplit

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "sdk")]
os.environ["DJANGO_SETTINGS_MODULE"] = "docplatform.settings"
os.environ["DATABASE_URL"] = "postgres://postgres@127.0.0.1:5432/bench_content"
os.environ.setdefault("SECRET_KEY", secrets.token_urlsafe(50))
os.environ.setdefault("ENCRYPTION_KEYS", base64.urlsafe_b64encode(secrets.token_bytes(32)).decode())
os.environ.setdefault("RUNTIME_SIGNING_KEY", secrets.token_urlsafe(32))

import django

django.setup()

from django.conf import settings
from django.db import connection
from django.test import Client
from django.test.utils import (
    CaptureQueriesContext,
    setup_databases,
    setup_test_environment,
    teardown_databases,
)

WORDS = [
    "install",
    "configure",
    "deploy",
    "token",
    "space",
    "page",
    "site",
    "webhook",
    "integration",
    "revision",
    "search",
    "reader",
    "editor",
    "branch",
    "commit",
    "review",
    "merge",
    "member",
    "admin",
    "organization",
    "event",
    "delivery",
    "retry",
    "signature",
    "component",
    "block",
    "action",
    "scope",
    "visitor",
    "claim",
    "condition",
    "section",
]


def body(n: int) -> str:
    rng = [WORDS[(n * 7 + i * 13) % len(WORDS)] for i in range(150)]
    lines = [" ".join(rng[i : i + 15]).capitalize() + "." for i in range(0, 150, 15)]
    return f"## Part {n}\n\nEvery page mentions walrus.\n\n" + "\n\n".join(lines) + "\n"


def pages_of(size: int) -> list[dict]:
    pages = []
    for n in range(size):
        section, rest = divmod(n, 100)
        path = f"s{section:03d}" if rest == 0 else f"s{section:03d}/p{rest:03d}"
        pages.append({"path": path, "title": f"Page {n}", "body": body(n)})
    return pages


def median_ms(samples: list[float]) -> float:
    return statistics.median(samples) * 1000


def measure(size: int, samples: int, organization, member, site_host) -> dict:
    from docplatform.documents.services import page_save
    from docplatform.models import Page, Site, Space
    from docplatform.revisions import space_content_update

    space = Space.objects.create(organization=organization, title=f"Space {size}")
    space.visibility = "public"
    space.save()
    space_content_update(space=space, pages=pages_of(size))
    space.refresh_from_db()
    with connection.cursor() as cursor:  # the statistics autovacuum keeps after a bulk write
        cursor.execute("ANALYZE")
    site = Site.objects.create(organization=organization, title=f"Site {size}", published=True)
    site.spaces.add(space)
    paths = [page["path"] for page in pages_of(size)]
    picks = [paths[(i * 7919) % size] for i in range(samples + 1)]

    saves, rows, statements = [], [], []
    for index, path in enumerate(picks[:samples]):
        before = Page.objects.filter(space=space).count()
        with CaptureQueriesContext(connection) as queries:
            started = time.perf_counter()
            revision = page_save(
                space=space,
                path=path,
                title=f"Edited {index}",
                body=body(index) + f"\nEdit {index}.\n",
                based_on=space.current_revision_id,
            )
            saves.append(time.perf_counter() - started)
        added = Page.objects.filter(space=space).count() - before
        ended = Page.objects.filter(space=space, valid_to=revision.number).count()
        rows.append(added + ended)
        statements.append(len(queries))

    reader = Client()
    reader.force_login(member)
    reader.get(f"/s/{space.pk}/{picks[-1]}")  # the revision's navigation, once
    reads, sizes = [], []
    for path in picks[:samples]:
        started = time.perf_counter()
        response = reader.get(f"/s/{space.pk}/{path}")
        reads.append(time.perf_counter() - started)
        assert response.status_code == 200, response.status_code
        sizes.append(len(response.content))

    visitor = Client(HTTP_HOST=site_host)
    site_reads = []
    for path in picks[:samples]:
        visitor.get(f"/{site.pk}/{space.pk}/{path}")  # warm
        started = time.perf_counter()
        response = visitor.get(f"/{site.pk}/{space.pk}/{path}")
        site_reads.append(time.perf_counter() - started)
        assert response.status_code == 200, response.status_code

    searches = []
    searcher = Client(HTTP_HOST=site_host)
    for index in range(samples):
        started = time.perf_counter()
        response = searcher.get(
            f"/{site.pk}/search", {"q": "walrus"}, REMOTE_ADDR=f"10.0.{index // 250}.{index % 250}"
        )
        searches.append(time.perf_counter() - started)
        assert response.status_code == 200, response.status_code

    return {
        "save ms": median_ms(saves),
        "save rows": statistics.median(rows),
        "save statements": statistics.median(statements),
        "reader ms": median_ms(reads),
        "reader KB": statistics.median(sizes) / 1024,
        "site ms": median_ms(site_reads),
        "search ms": median_ms(searches),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="10,100,1000,10000")
    parser.add_argument("--samples", type=int, default=15)
    args = parser.parse_args()
    sizes = [int(size) for size in args.sizes.split(",")]

    from django.contrib.auth import get_user_model

    from docplatform.models import Membership, Organization

    setup_test_environment()
    settings.SPACE_MAX_PAGES = max(settings.SPACE_MAX_PAGES, *sizes)
    settings.SITE_RATES = {**settings.SITE_RATES, "search": "100000/minute"}
    databases = setup_databases(verbosity=0, interactive=False)
    try:
        organization = Organization.objects.create(subdomain="bench", title="Bench")
        member = get_user_model().objects.create_user("member", password=secrets.token_hex())
        Membership.objects.create(organization=organization, user=member, role="member")
        site_host = urlsplit(settings.SITES_URL).netloc
        results = {}
        for size in sizes:
            print(f"measuring {size} pages ...", file=sys.stderr, flush=True)
            results[size] = measure(size, args.samples, organization, member, site_host)
    finally:
        teardown_databases(databases, verbosity=0)

    columns = list(results[sizes[0]])
    print("| pages | " + " | ".join(columns) + " |")
    print("| ---: | " + " | ".join("---:" for _ in columns) + " |")
    for size in sizes:
        row = results[size]
        print(f"| {size:,} | " + " | ".join(f"{row[c]:.1f}" for c in columns) + " |")
    largest, smallest = results[sizes[-1]], results[sizes[0]]
    print(
        f"| ratio {sizes[-1]:,}/{sizes[0]:,} | "
        + " | ".join(f"{largest[c] / smallest[c]:.2f}x" if smallest[c] else "-" for c in columns)
        + " |"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
