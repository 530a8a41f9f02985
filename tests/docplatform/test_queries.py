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


def _request_boundary():
    """What Django does between two requests on a kept connection."""
    connection.close_if_unusable_or_obsolete()


def _kill_backend():
    """The connection's PostgreSQL backend ended from outside (a restart, a failover)."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_backend_pid()")
        pid = cursor.fetchone()[0]
    import psycopg

    with psycopg.connect(
        **connection.get_connection_params(), autocommit=True
    ) as other:  # another session
        other.execute("SELECT pg_terminate_backend(%s)", [pid])
    return pid


on_postgresql = pytest.mark.skipif(
    connection.vendor != "postgresql", reason="PostgreSQL's kept connections"
)


@pytest.fixture
def kept_connection(monkeypatch):
    """The connection kept across requests and checked, as production's settings have it."""
    monkeypatch.setitem(connection.settings_dict, "CONN_MAX_AGE", None)
    monkeypatch.setitem(connection.settings_dict, "CONN_HEALTH_CHECKS", True)
    connection.close()  # the next one is opened with them
    yield
    connection.close()


@on_postgresql
@pytest.mark.django_db(transaction=True)
def test_a_read_replaces_the_health_check_and_finds_a_broken_connection_replaced(
    kept_connection, organization, tmp_path
):
    query = Prepared(Space.objects.filter(organization=stand_in("org")).values_list("pk"))
    space = SpaceFactory(organization=organization)
    # No SELECT 1 before a request's first statement when it is a compiled read (libpq's
    # own trace of what went to the server).
    _request_boundary()
    connection.ensure_connection()
    trace = tmp_path / "trace"
    with trace.open("w") as handle:
        connection.connection.pgconn.trace(handle.fileno())
        assert query.rows({stand_in("org"): organization.pk}) == [[space.pk]]
        connection.connection.pgconn.untrace()
    sent = [line for line in trace.read_text().splitlines() if "\tF\t" in line]
    assert not [line for line in sent if '"SELECT 1"' in line]
    assert [line for line in sent if "organization_id" in line]
    # The backend ended between two requests: the read runs again on a new connection.
    killed = _kill_backend()
    _request_boundary()
    assert query.rows({stand_in("org"): organization.pk}) == [[space.pk]]
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_backend_pid()")
        assert cursor.fetchone()[0] != killed


@on_postgresql
@pytest.mark.django_db(transaction=True)
def test_a_write_keeps_the_health_check_and_is_never_run_twice(kept_connection, organization):
    # A write may have been done before its connection broke: it is never run again. Django's
    # check replaces the broken connection before it, as for any statement of the ORM's.
    space = SpaceFactory(organization=organization, title="before")
    table = connection.ops.quote_name(Space._meta.db_table)
    update = PreparedSQL(
        f"UPDATE {table} SET title = %s WHERE id = %s",  # noqa: S608
        [TITLE, stand_in("id")],
        using="default",
    )
    killed = _kill_backend()
    _request_boundary()
    assert update.execute({TITLE: "after", stand_in("id"): space.pk}) == []
    assert Space.objects.get(pk=space.pk).title == "after"
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_backend_pid()")
        assert cursor.fetchone()[0] != killed
    # Broken in a request, after its check: the caller is told, the write not run again.
    _kill_backend()
    from django.db import InterfaceError, OperationalError

    with pytest.raises((OperationalError, InterfaceError)):
        update.execute({TITLE: "again", stand_in("id"): space.pk})
    connection.close()
    assert Space.objects.get(pk=space.pk).title == "after"
