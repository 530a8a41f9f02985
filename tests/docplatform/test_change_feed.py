"""The change feed (``docplatform.change_feed``): every committed change is heard by the next
``synced()``, with no wait; an uncommitted one is not; a lost connection vouches for nothing
until the feed connects again; closed, it connects again when asked; off, it never connects.
(The tables' triggers: ``tests/integrations/test_kept_installations.py``.)"""

import os

import psycopg
import pytest
from django.db import connection, transaction

from docplatform.change_feed import CHANNEL, DRAIN_SECONDS, EVERYTHING, ChangeFeed, session_name
from tests.conftest import wait_until

pytestmark = [
    pytest.mark.usefixtures("transactional_db"),
    pytest.mark.skipif(connection.vendor != "postgresql", reason="LISTEN/NOTIFY: PostgreSQL"),
]


@pytest.fixture
def heard():
    changes: list[str] = []
    feed = ChangeFeed()
    feed.subscribe(changes.append)
    assert feed.synced() is not None  # connected and listening
    changes.clear()
    yield feed, changes
    feed.close()


def feed_sessions() -> int:
    """This process's feed sessions on the database (a closed one's backend ends a moment
    after its connection is closed: ``settled_sessions``)."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT count(*) FROM pg_stat_activity WHERE application_name = %s", [session_name()]
        )
        return cursor.fetchone()[0]


def settled_sessions(expected: int) -> int:
    wait_until(lambda: feed_sessions() == expected, timeout=5)
    return feed_sessions()


def things(changes: list[str]) -> list[str]:
    """The test's own changes among those heard (other tests' workers may write meanwhile)."""
    return [change for change in changes if change.startswith("thing:")]


def notify(change: str) -> None:
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_notify(%s, %s)", [CHANNEL, change])


def test_a_committed_change_is_heard_by_the_next_sync_with_no_wait(heard):
    feed, changes = heard
    for n in range(20):
        notify(f"thing:{n}")
        assert feed.synced() is not None
        assert things(changes) == [f"thing:{n}"]
        changes.clear()


def test_a_change_is_heard_once_committed_not_before(heard):
    feed, changes = heard
    with transaction.atomic():
        notify("thing:1")
        feed.synced()
        assert things(changes) == []
    feed.synced()
    assert things(changes) == ["thing:1"]


def test_a_lost_connection_vouches_for_nothing(heard):
    feed, changes = heard
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = %s",
            [session_name()],
        )
    assert feed.synced() is None
    assert EVERYTHING in changes
    assert feed.synced() is None  # not tried again at once: after RETRY_SECONDS


def test_an_idle_feed_closes_its_connection_and_opens_one_when_asked(heard):
    feed, changes = heard
    assert settled_sessions(1) == 1
    feed.close()
    assert settled_sessions(0) == 0 and EVERYTHING in changes
    assert feed.synced() is not None
    assert settled_sessions(1) == 1


def test_a_connection_numbered_past_1024_listens_and_vouches(descriptors_past_1024):
    feed, changes = ChangeFeed(), []
    feed.subscribe(changes.append)
    try:
        assert feed.synced() is not None  # its probe waited for with poll, not select
        notify("thing:wide")
        assert feed.synced() is not None
        assert things(changes) == ["thing:wide"]
    finally:
        feed.close()


def test_off_it_never_connects(settings):
    settings.DATABASE_CHANGE_FEED = False
    settled_sessions(0)  # those of the tests before
    feed = ChangeFeed()
    assert feed.synced() is None
    assert feed_sessions() == 0


def test_what_comes_while_no_request_asks_is_taken_in_by_the_feeds_thread(heard):
    _feed, changes = heard
    notify("thing:quiet")
    wait_until(lambda: "thing:quiet" in changes, timeout=5 * DRAIN_SECONDS)  # no synced()


def test_a_forked_child_listens_on_its_own_and_leaves_the_parents_session(heard):
    feed, changes = heard
    child = os.fork()
    if child == 0:  # the child: its own session, heard on its own (a server's worker)
        heard_here: list[str] = []
        feed.subscribe(heard_here.append)
        epoch = feed.synced()
        # Not through the parent's Django connection, whose session the child must not use.
        params = connection.get_connection_params()
        dsn = {
            key: params[key]
            for key in ("dbname", "user", "password", "host", "port")
            if key in params
        }
        with psycopg.connect(**dsn, autocommit=True) as own:
            own.execute("SELECT pg_notify(%s, %s)", (CHANNEL, "thing:child"))
        feed.synced()
        os._exit(0 if epoch is not None and "thing:child" in heard_here else 1)
    _, status = os.waitpid(child, 0)
    assert os.waitstatus_to_exitcode(status) == 0
    notify("thing:parent")
    assert feed.synced() is not None  # the parent's session was left open
    assert "thing:parent" in changes
