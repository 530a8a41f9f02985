"""Querysets compiled once (``docplatform.queries``): each run gives what the same queryset
built afresh gives, with its own values for the stand-ins, lists included."""

import pytest

from docplatform.models import Space
from docplatform.queries import Prepared, stand_in, values_of
from tests.factories import SpaceFactory

pytestmark = pytest.mark.django_db

TITLE = stand_in("title")


def test_a_prepared_query_reads_as_the_orm_does(organization):
    spaces = [SpaceFactory(organization=organization, title=f"S{n}") for n in range(4)]
    query = Prepared(
        Space.objects.select_related("organization")
        .filter(pk__in=values_of("ids", "text"))
        .exclude(title=TITLE)
        .order_by("title")
    )
    ids = [space.pk for space in spaces]
    found = query.instances({stand_in("ids"): ids[:3], TITLE: "S1"})
    assert [space.title for space in found] == ["S0", "S2"]
    assert found[0].organization == organization  # read with its relation
    assert found[0].created_at == Space.objects.get(pk=ids[0]).created_at  # converted
    assert query.instances({stand_in("ids"): [], TITLE: "S1"}) == []
    rows = Prepared(
        Space.objects.filter(pk__in=values_of("ids", "text")).values_list("title", "created_at")
    ).rows({stand_in("ids"): ids[3:]})
    assert rows == [["S3", spaces[3].created_at]]
