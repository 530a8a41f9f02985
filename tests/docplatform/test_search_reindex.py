"""``manage.py search_reindex``: after a deploy whose renderer shows pages otherwise, the
current pages are indexed again from what they show, on PostgreSQL (the vectors) and SQLite
(the FTS5 rows); an unknown space is named, nothing indexed."""

import pytest
from django.db import connection

from docplatform.models import CURRENT, Page, Space
from docplatform.reading.search import spaces_search
from docplatform.revisions import space_content_update
from docplatform.search_index import FTS_TABLE, vector
from tests.factories import SpaceFactory
from tests.processes import manage_py

pytestmark = pytest.mark.django_db(transaction=True)


def found(space, word: str) -> list[str]:
    return [hit.page.path for hit in spaces_search(Space.objects.filter(pk=space.pk), word)]


def index_as_an_older_renderer_did(space, text: str):
    """The current pages' index holds ``text`` instead of what they show now."""
    current = Page.objects.filter(space=space, valid_to=CURRENT)
    if connection.vendor == "postgresql":
        for page in current:
            Page.objects.filter(pk=page.pk).update(
                search_vector=vector(page.title, text, space.search_language)
            )
    else:
        with connection.cursor() as cursor:
            for page in current:
                cursor.execute(
                    f"UPDATE {FTS_TABLE} SET body = %s WHERE page_id = %s",  # noqa: S608
                    [text, page.pk],
                )


def test_the_current_pages_are_indexed_again_from_what_they_show(organization):
    space = SpaceFactory(organization=organization)
    other = SpaceFactory(organization=organization)
    pages = [{"path": "beacons", "title": "Beacons", "body": "Each lighthouse has a keeper."}]
    space_content_update(space=space, pages=pages)
    space_content_update(space=other, pages=pages)
    space.refresh_from_db()
    other.refresh_from_db()
    for each in (space, other):
        index_as_an_older_renderer_did(each, "foghorn")
        assert found(each, "lighthouse") == []
        assert found(each, "foghorn") == ["beacons"]
    one = manage_py("search_reindex", "--space", space.pk)
    assert one.returncode == 0, one.stderr
    assert one.stdout.strip() == "1 pages of 1 spaces indexed again"
    assert found(space, "lighthouse") == ["beacons"]
    assert found(space, "foghorn") == []
    assert found(other, "lighthouse") == []  # not asked for
    every = manage_py("search_reindex")
    assert every.returncode == 0, every.stderr
    assert every.stdout.strip() == "2 pages of 2 spaces indexed again"
    assert found(other, "lighthouse") == ["beacons"]


def test_an_unknown_space_is_named_and_nothing_is_indexed(organization):
    space = SpaceFactory(organization=organization)
    space_content_update(space=space, pages=[{"path": "a", "title": "A", "body": "anchor"}])
    space.refresh_from_db()
    index_as_an_older_renderer_did(space, "buoy")
    done = manage_py("search_reindex", "--space", space.pk, "--space", "no-such-space")
    assert done.returncode == 1
    assert "--space: no space no-such-space" in done.stderr
    assert "Traceback" not in done.stderr
    assert found(space, "anchor") == []
