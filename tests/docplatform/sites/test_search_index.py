"""Search reads an index written with each page version (PostgreSQL: a weighted tsvector with a
GIN index; SQLite: an FTS5 table): titles rank first, snippets mark the words found and stay
text, a page written through the editor or the API is found at once, and a site's searches are
rate-limited per address."""

import pytest
from django.core.checks import run_checks
from django.core.exceptions import ValidationError
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext

from docplatform.models import CURRENT, Page
from docplatform.revisions import space_content_update
from docplatform.search_index import FTS_TABLE, space_search_language_set
from docplatform.sites.selectors import site_search
from docplatform.spaces.services import space_delete
from tests.api_helpers import API, api_client
from tests.docplatform.documents.test_documents_browser import assert_inert

from .conftest import HANDBOOK

pytestmark = pytest.mark.django_db


def _titles(response) -> list[str]:
    html = response.content.decode()
    return [
        part.split('">', 1)[1].split("</a>", 1)[0]
        for part in html.split('class="search-hit-title" href="')[1:]
    ]


def test_a_title_match_ranks_above_a_text_match(visitor, site, handbook):
    pages = [
        *HANDBOOK,
        {"path": "tips", "title": "Tips", "body": "Visit the lighthouse at dawn."},
        {"path": "lighthouse", "title": "The lighthouse", "body": "A tall tower by the sea."},
    ]
    space_content_update(space=handbook, pages=pages)
    found = visitor.get(f"/{site.pk}/search", {"q": "lighthouse"})
    assert _titles(found) == ["The lighthouse", "Tips"]


def test_the_snippet_marks_the_words_and_shows_the_pages_text_as_text(visitor, site, handbook):
    body = "Beware of `<img src=x onerror=alert(1)>` near the old lighthouse, said the keeper."
    pages = [*HANDBOOK, {"path": "warning", "title": "Warning", "body": body}]
    space_content_update(space=handbook, pages=pages)
    html = visitor.get(f"/{site.pk}/search", {"q": "lighthouse"}).content.decode()
    assert "<mark>lighthouse</mark>" in html
    assert "&lt;img src=x onerror=alert(1)&gt;" in html
    assert_inert(html)
    [hit] = site_search(site, "keeper lighthouse")
    assert hit.snippet[0].startswith("Beware of <img src=x")  # text, escaped when shown
    assert {hit.snippet[1], hit.snippet[3]} == {"lighthouse", "keeper"}


def test_a_page_written_through_the_editor_is_found_at_once(site, handbook, org_member):
    editor = Client()
    editor.force_login(org_member)
    saved = editor.post(
        f"/s/{handbook.pk}/guide/install/edit",
        {
            "title": "Install",
            "path": "guide/install",
            "body": "Run the zeppelin installer.",
            "based_on": handbook.current_revision_id,
        },
    )
    assert saved.status_code == 302
    [hit] = site_search(site, "zeppelin")
    assert hit.page.path == "guide/install" and "zeppelin" in hit.snippet


def test_a_page_written_through_the_api_is_found_at_once(site, handbook, org_member):
    response = api_client(org_member).put(
        f"{API}/spaces/{handbook.pk}/pages/faq",
        {"title": "Questions", "body": "Where is the aquarium?"},
    )
    assert response.status_code == 201, response.json()
    [hit] = site_search(site, "aquarium")
    assert (hit.page.path, hit.page.title) == ("faq", "Questions")


def test_the_index_is_read_through_the_databases_own_search(site, handbook):
    """PostgreSQL: the versions' vectors through their GIN index; SQLite: the FTS5 table."""
    with CaptureQueriesContext(connection) as queries:
        assert [hit.page.path for hit in site_search(site, "run")] == ["guide/install"]
    [sql] = [q["sql"] for q in queries if "@@" in q["sql"] or " MATCH " in q["sql"]]
    current = Page.objects.get(space=handbook, path="guide/install", valid_to=CURRENT)
    with connection.cursor() as cursor:
        if connection.vendor == "postgresql":
            assert "search_vector" in sql and "to_tsvector" not in sql  # stored, not computed
            # The current versions' vectors have their GIN index (which the planner picks at
            # scale, benchmarks/search_scale.py; on a few rows, it reads the space's).
            cursor.execute("SELECT indexdef FROM pg_indexes WHERE indexname = 'page_search_idx'")
            [(definition,)] = cursor.fetchall()
            assert "USING gin (search_vector) WHERE (valid_to = 2147483647)" in definition
        else:
            found = f"SELECT page_id FROM {FTS_TABLE} WHERE {FTS_TABLE} MATCH %s"  # noqa: S608
            cursor.execute(found, ["run"])
            assert current.pk in {row[0] for row in cursor.fetchall()}


def test_a_site_search_never_finds_a_private_spaces_page(visitor, site, private):
    assert (
        "No page holds “roadmap”."
        in visitor.get(f"/{site.pk}/search", {"q": "roadmap"}).content.decode()
    )
    assert site_search(site, "roadmap") == []


def test_searches_are_rate_limited_per_address(visitor, site, handbook, settings):
    settings.SITE_RATES = {**settings.SITE_RATES, "search": "2/minute"}
    for _ in range(2):
        assert visitor.get(f"/{site.pk}/search", {"q": "installer"}).status_code == 200
    assert visitor.get(f"/{site.pk}/search").status_code == 200  # no search: not counted
    refused = visitor.get(f"/{site.pk}/search", {"q": "installer"})
    assert refused.status_code == 429
    assert 1 <= int(refused["Retry-After"]) <= 61
    html = refused.content.decode()
    assert "Too many searches from your address: try again in" in html
    assert "Run the installer" not in html
    other = visitor.get(f"/{site.pk}/search", {"q": "installer"}, REMOTE_ADDR="198.51.100.8")
    assert other.status_code == 200


def test_a_spaces_search_language_decides_its_stemming(site, handbook):
    if connection.vendor != "postgresql":
        pytest.skip("SQLite's index stems English whatever the space's language")
    assert [hit.page.path for hit in site_search(site, "install")] == [
        "guide/install",
        "intro",  # "Installing takes a minute."
    ]
    space_search_language_set(space=handbook, language="simple")  # no stemming
    assert [hit.page.path for hit in site_search(site, "install")] == ["guide/install"]
    assert [hit.page.path for hit in site_search(site, "installing")] == ["intro"]
    with pytest.raises(ValidationError) as error:
        space_search_language_set(space=handbook, language="klingon")
    assert list(error.value.message_dict) == ["search_language"]


def test_a_deleted_spaces_text_leaves_the_index(handbook, org_admin):
    ids = list(Page.objects.filter(space=handbook).values_list("pk", flat=True))
    space_delete(space=handbook, actor=org_admin)
    with connection.cursor() as cursor:
        if connection.vendor == "postgresql":  # the vectors went with the versions' rows
            cursor.execute("SELECT count(*) FROM docplatform_page WHERE id = ANY(%s)", [ids])
        else:
            marks = ", ".join(["%s"] * len(ids))
            cursor.execute(f"SELECT count(*) FROM {FTS_TABLE} WHERE page_id IN ({marks})", ids)  # noqa: S608
        assert cursor.fetchone()[0] == 0


def test_a_search_language_the_database_lacks_is_named_by_the_database_checks(settings):
    settings.SEARCH_LANGUAGE = "klingon"
    errors = [e for e in run_checks(databases=["default"]) if e.id == "docplatform.E110"]
    if connection.vendor != "postgresql":
        assert errors == []  # SQLite stems English whatever it says
        return
    [error] = errors
    assert error.msg.startswith("SEARCH_LANGUAGE: 'klingon' is not a text search configuration")
    settings.SEARCH_LANGUAGE = "simple"
    assert not [e for e in run_checks(databases=["default"]) if e.id == "docplatform.E110"]
