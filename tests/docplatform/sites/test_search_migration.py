"""Migration 0025 indexes every page version there is: a page written before it is found by
search (its text, never its block's fence), on PostgreSQL and on SQLite alike."""

import pytest

from docplatform.content import rendered
from docplatform.markdown import block_fence
from docplatform.models import Space
from docplatform.reading.search import spaces_search

BEFORE = [("docplatform", "0024_event_cursor_indexes")]
AFTER = [("docplatform", "0025_page_search")]
CURRENT = 2**31 - 1


@pytest.mark.slow
@pytest.mark.django_db(transaction=True)
def test_the_versions_written_before_are_indexed(migrate_to):
    old = migrate_to(BEFORE)
    organization = old.get_model("docplatform", "Organization").objects.create(
        id="o1", subdomain="old", title="Old"
    )
    space = old.get_model("docplatform", "Space").objects.create(
        id="s1", organization=organization, title="Handbook"
    )
    revision = old.get_model("docplatform", "Revision").objects.create(
        id="r1", space=space, number=1, page_count=2
    )
    space.current_revision = revision
    space.save()
    fence = block_fence(integration="weather", block="forecast", key="k1", props={"x": "zanzibar"})
    page_model = old.get_model("docplatform", "Page")
    body = f"Pack a lantern.\n\n{fence}"
    page_model.objects.create(
        id="p1",
        space=space,
        valid_from=1,
        path="trips",
        title="Trips",
        body=body,
        **rendered(body),
    )
    page_model.objects.create(  # never rendered: the migration renders it to index it
        id="p2",
        space=space,
        valid_from=1,
        path="old",
        title="Old page",
        body="A brass compass.",
    )

    migrate_to(AFTER)
    spaces = Space.objects.filter(pk="s1")
    assert [hit.page.pk for hit in spaces_search(spaces, "lantern")] == ["p1"]
    assert [hit.page.pk for hit in spaces_search(spaces, "compass")] == ["p2"]
    assert spaces_search(spaces, "zanzibar") == []
