"""Site search at 100,000 pages: 10 published sites, each listing one public space of 10,000
current pages (about 1 KB of text each), searched through the platform's own search service
(``docplatform.sites.selectors.site_search``: the index query, the pages' adaptive content
applied, the snippets) and through the site's search page (``GET /<site>/search?q=``, the
template and the rate limit included).

The pages' words follow Zipf's law over a vocabulary of 20,000 made-up words (as words of
real text do); three queries are timed, each on every site in turn:

common      a word among the twenty most frequent: most pages hold it, so the search ranks
            thousands of rows for 20 hits (the worst case of one word);
rare        a word that 5 pages of each space hold;
two words   two words of middle frequency, both required.

and, for comparison, the search before the index (issue 33): the same common word matched by
computing each page's ``to_tsvector`` at the query, on one site, 3 times.

From a fresh clone (PostgreSQL, trust auth, on 127.0.0.1):

    make install
    DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres \
        .venv/bin/python benchmarks/search_scale.py [--pages 10000] [--sites 10] [--samples 30]

It works in a database of its own (``test_bench_search``, created and dropped, like Django's
test database). The setup writes rows in bulk (``bulk_create``, then every vector in one
UPDATE, as migration 0025 fills existing versions); only the searches are timed. The goal:
p50 under 50 ms at 100,000 pages.
"""

import argparse
import base64
import hashlib
import os
import random
import secrets
import statistics
import sys
import time
from pathlib import Path
from urllib.parse import urlsplit

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "docplatform.settings")
# Keys of this run's own: with DEBUG off the platform derives none.
os.environ.setdefault("SECRET_KEY", secrets.token_urlsafe(40))
# A key of the benchmark's own, the same every run: a --reuse run reads what --keep left.
_KEY = hashlib.sha256(b"benchmarks/search_scale.py").digest()
os.environ.setdefault("ENCRYPTION_KEYS", base64.urlsafe_b64encode(_KEY).decode())
os.environ.setdefault("RUNTIME_SIGNING_KEY", secrets.token_urlsafe(32))
os.environ["SITE_SEARCH_RATE"] = "1000000/minute"  # the rate limit is not what is measured

import django

django.setup()

from django.conf import settings
from django.db import connection
from django.test import Client

from docplatform.markdown import RENDERER_VERSION
from docplatform.models import CURRENT, Organization, Page, Revision, Site, Space
from docplatform.reading import search
from docplatform.sites.models import SiteSpace

VOCABULARY = 20_000
WORDS_PER_PAGE = 150  # about 1 KB
RARE_PAGES = 5
SYLLABLES = [c + v for c in "bcdfghklmnprstvz" for v in ("a", "e", "i", "o", "u", "ai", "ou")]
OUTLINE = {"headings": [], "blocks": [], "nonce": "", "sections": []}


def vocabulary(rng: random.Random) -> list[str]:
    words: set[str] = set()
    while len(words) < VOCABULARY:
        words.add("".join(rng.choice(SYLLABLES) for _ in range(rng.randint(2, 4))))
    ordered = sorted(words)
    rng.shuffle(ordered)  # the frequent words of every length
    return ordered


def zipf_weights() -> list[float]:
    return [1 / rank**1.07 for rank in range(1, VOCABULARY + 1)]


def body(rng: random.Random, words: list[str], weights: list[float]) -> str:
    chosen = rng.choices(words, weights=weights, k=WORDS_PER_PAGE)
    sentences, paragraph, paragraphs = [], [], []
    for start in range(0, len(chosen), 12):
        sentence = " ".join(chosen[start : start + 12])
        paragraph.append(sentence[0].upper() + sentence[1:] + ".")
        if len(paragraph) == 4:
            paragraphs.append(" ".join(paragraph))
            paragraph = []
    if paragraph:
        paragraphs.append(" ".join(paragraph))
    sentences.extend(paragraphs)
    return "\n\n".join(sentences) + "\n"


def html_of(markdown: str) -> str:
    """What the renderer makes of plain paragraphs (checked against it once, in ``main``)."""
    return "".join(f"<p>{part}</p>\n" for part in markdown.strip().split("\n\n"))


def populate(pages_per_space: int, site_count: int, words: list[str], rare: str) -> list[Site]:
    rng = random.Random(33)
    weights = zipf_weights()
    organization = Organization.objects.create(subdomain="bench", title="Bench")
    sites = []
    for number in range(site_count):
        space = Space.objects.create(
            organization=organization, title=f"Space {number}", visibility="public"
        )
        revision = Revision.objects.create(space=space, number=1, page_count=pages_per_space)
        rare_pages = set(rng.sample(range(pages_per_space), RARE_PAGES))
        batch = []
        for index in range(pages_per_space):
            text = body(rng, words, weights)
            if index in rare_pages:
                text = f"{text.rstrip()} The {rare} is here.\n"
            title = " ".join(rng.choices(words[:2000], k=3)).capitalize()
            batch.append(
                Page(
                    space=space,
                    valid_from=1,
                    valid_to=CURRENT,
                    path=f"section-{index // 100}/page-{index}",
                    title=title,
                    body=text,
                    position=f"{index:06d}",
                    html=html_of(text),
                    outline=OUTLINE,
                    rendered_with=RENDERER_VERSION,
                )
            )
        Page.objects.bulk_create(batch, batch_size=2000)
        Space.objects.filter(pk=space.pk).update(current_revision=revision)
        site = Site.objects.create(
            organization=organization, title=f"Site {number}", published=True
        )
        SiteSpace.objects.create(site=site, space=space, position=0)
        sites.append(site)
        print(f"  space {number + 1}/{site_count}: {pages_per_space} pages", flush=True)
    return sites


def fill_vectors() -> float:
    started = time.perf_counter()
    with connection.cursor() as cursor:
        # The pages' text is their Markdown here (plain paragraphs): one UPDATE for all.
        cursor.execute(
            "UPDATE docplatform_page SET search_vector = "
            "setweight(to_tsvector('english', title), 'A') || "
            "setweight(to_tsvector('english', body), 'B')"
        )
        cursor.execute("VACUUM ANALYZE docplatform_page")
    return time.perf_counter() - started


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(share * (len(ordered) - 1)))]


def timed(call, samples: int, sites: list[Site]) -> list[float]:
    times = []
    for index in range(samples):
        site = sites[index % len(sites)]
        started = time.perf_counter()
        call(site)
        times.append((time.perf_counter() - started) * 1000)
    return times


def matching(word: str, space: Space) -> int:
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT count(*) FROM docplatform_page WHERE space_id = %s AND valid_to = %s "
            "AND search_vector @@ websearch_to_tsquery('english', %s)",
            [space.pk, CURRENT, word],
        )
        return cursor.fetchone()[0]


def before_index(site: Site, word: str) -> float:
    """The search as it was: each page's vector computed at the query (its ranked query)."""
    space_ids = list(site.spaces.values_list("pk", flat=True))
    started = time.perf_counter()
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT id FROM (SELECT id, setweight(to_tsvector('english', title), 'A') || "
            "setweight(to_tsvector('english', body), 'B') AS document FROM docplatform_page "
            "WHERE space_id = ANY(%s) AND valid_to = %s) AS pages "
            "WHERE document @@ websearch_to_tsquery('english', %s) "
            "ORDER BY ts_rank(document, websearch_to_tsquery('english', %s)) DESC LIMIT 40",
            [space_ids, CURRENT, word, word],
        )
        cursor.fetchall()
    return (time.perf_counter() - started) * 1000


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pages", type=int, default=10_000, help="pages per space")
    parser.add_argument("--sites", type=int, default=10, help="sites (one space each)")
    parser.add_argument("--samples", type=int, default=30, help="searches per query")
    parser.add_argument(
        "--keep", action="store_true", help="keep the database (for --reuse) instead of dropping it"
    )
    parser.add_argument("--reuse", action="store_true", help="search a database a --keep run left")
    args = parser.parse_args()
    if connection.vendor != "postgresql":
        sys.exit("search_scale.py measures PostgreSQL: set DATABASE_URL=postgres://...")

    from docplatform.content import rendered

    sample = "Lorem ipsum dolor.\n\nSit amet.\n"
    assert rendered(sample)["html"].strip() == html_of(sample).strip(), rendered(sample)["html"]

    creation = connection.creation
    old_name = connection.settings_dict["NAME"]
    connection.settings_dict.setdefault("TEST", {})["NAME"] = "test_bench_search"
    if args.reuse:
        connection.close()
        connection.settings_dict["NAME"] = "test_bench_search"
    else:
        creation.create_test_db(verbosity=0, autoclobber=True)
    try:
        rng = random.Random(7)
        words = vocabulary(rng)
        rare = "quixotry"
        common, pair = words[10], f"{words[100]} {words[200]}"
        total = args.pages * args.sites
        if args.reuse:
            sites = list(Site.objects.order_by("title"))
        else:
            print(f"Creating {args.sites} sites of {args.pages:,} pages ({total:,} in all)...")
            started = time.perf_counter()
            sites = populate(args.pages, args.sites, words, rare)
            print(f"  rows written in {time.perf_counter() - started:.0f} s", flush=True)
            print(f"  vectors filled (one UPDATE) and analysed in {fill_vectors():.0f} s")
        space = sites[0].spaces.get()
        queries = {"common": common, "rare": rare, "two words": pair}
        print(f"\nPostgreSQL {connection.pg_version // 10000}, {total:,} current pages")
        for name, query in queries.items():
            print(f"  {name:<10} {query!r}: {matching(query, space):,} pages of a site match")
        visitor = Client(HTTP_HOST=urlsplit(settings.SITES_URL).netloc)
        for site in sites:  # warm: every site's pages and its search page read once
            visitor.get(f"/{site.pk}/search", {"q": common})
        print(f"\n{'query':<10} {'where':<8} {'p50 ms':>8} {'p95 ms':>8} {'hits':>5}")
        results = {}
        for name, query in queries.items():
            hits = len(search.site_search(sites[0], query))
            service = timed(lambda site, q=query: search.site_search(site, q), args.samples, sites)
            page = timed(
                lambda site, q=query: visitor.get(f"/{site.pk}/search", {"q": q}),
                args.samples,
                sites,
            )
            for where, times in (("service", service), ("page", page)):
                p50, p95 = statistics.median(times), percentile(times, 0.95)
                results[(name, where)] = p50
                print(f"{name:<10} {where:<8} {p50:>8.1f} {p95:>8.1f} {hits:>5}")
        before = [before_index(sites[0], common) for _ in range(3)]
        print(f"\nbefore the index, common word, one site: p50 {statistics.median(before):.0f} ms")
        worst = max(results.values())
        print(f"goal, p50 under 50 ms at {total:,} pages: {'met' if worst < 50 else 'NOT met'}")
        with connection.cursor() as cursor:
            ranked = search._full_text({space.pk: space}, common)[:40]
            sql, params = ranked.query.sql_with_params()
            cursor.execute(f"EXPLAIN (ANALYZE, BUFFERS) {sql}", params)
            print("\nThe ranked query of the common word, one site:")
            print("\n".join("  " + row[0] for row in cursor.fetchall()))
    finally:
        if not args.keep:
            creation.destroy_test_db(old_name, verbosity=0)


if __name__ == "__main__":
    main()
