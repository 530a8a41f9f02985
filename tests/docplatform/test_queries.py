"""Querysets compiled once (``docplatform.queries``): each run gives what the same queryset
built afresh gives, with its own values for the stand-ins, lists included."""

from datetime import timedelta

import pytest
from django.db import connection
from django.utils import timezone

from docplatform.models import Space
from docplatform.queries import (
    Prepared,
    PreparedSQL,
    stand_in,
    stand_in_time,
    stand_in_values,
    stand_ins,
    values_of,
)
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
    by_length = Prepared(Space.objects.filter(pk__in=stand_ins("id", 2)).order_by("title"))
    found = by_length.instances(stand_in_values("id", ids[2:]))
    assert [space.title for space in found] == ["S2", "S3"]


def test_times_stand_in_as_the_orm_and_hand_written_sql_pass_them(organization):
    space = SpaceFactory(organization=organization)
    made = stand_in_time(1)
    query = Prepared(Space.objects.filter(created_at__lte=made).values_list("pk"))
    assert query.rows({made: timezone.now()}) == [[space.pk]]
    assert query.rows({made: space.created_at - timedelta(seconds=1)}) == []
    table = connection.ops.quote_name(Space._meta.db_table)
    update = PreparedSQL(
        f"UPDATE {table} SET created_at = %s WHERE id = %s RETURNING id",  # noqa: S608
        [made, stand_in("id")],
        using="default",
    )
    earlier = space.created_at - timedelta(days=1)
    assert update.execute({made: earlier, stand_in("id"): space.pk}) == [[space.pk]]
    assert Space.objects.get(pk=space.pk).created_at == earlier


def _prepared_in_session() -> int:
    with connection.cursor() as cursor:
        cursor.execute("SELECT count(*) FROM pg_prepared_statements")
        return cursor.fetchone()[0]


@pytest.mark.skipif(connection.vendor != "postgresql", reason="PostgreSQL prepares statements")
@pytest.mark.parametrize("enabled", [True, False])
def test_compiled_statements_are_prepared_by_postgresql_unless_switched_off(
    organization, settings, enabled
):
    """A compiled statement is prepared once per connection and run again by name; with
    DATABASE_PREPARED_STATEMENTS off (a pooler that does not keep them) nothing is."""
    settings.DATABASE_PREPARED_STATEMENTS = enabled
    SpaceFactory(organization=organization, title="Prepared")
    query = Prepared(Space.objects.filter(title=TITLE).order_by())
    before = _prepared_in_session()
    for _ in range(3):
        assert [space.title for space in query.instances({TITLE: "Prepared"})] == ["Prepared"]
    assert _prepared_in_session() - before == (1 if enabled else 0)
