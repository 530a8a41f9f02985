"""A web process's log lines written in batches (``RUNTIME_LOG_BATCH_SECONDS``, PostgreSQL):
the public endpoint's calls through a real runtime host and the live server each show in the
log once the interval has passed, several in one transaction; a line the database refuses
loses no other line of its batch; on SQLite each line is written once its answer is sent."""

import os
import textwrap
import threading
import time

import pytest
import requests
from django.db import connection

from integrations.environment import installation_public_endpoint
from integrations.gateway import log_batches
from integrations.gateway.log_store import CallRecord
from integrations.models import Installation, IntegrationLog
from integrations.services import integration_publish_folder
from integrations.services.installations import installation_create
from tests.conftest import wait_until
from tests.factories import SpaceFactory
from tests.integrations.conftest import minimal_manifest

SCRIPT = """
from docplatform_sdk import Response, create_integration

def fetch(request, context):
    return Response.json({"route": request.route})

integration = create_integration(fetch=fetch)
"""
on_postgresql = pytest.mark.skipif(
    connection.vendor != "postgresql", reason="lines are batched on PostgreSQL only"
)


@pytest.fixture
def installed(write_integration, organization, org_admin):
    root = write_integration(
        minimal_manifest(name="batched", script="main.py"),
        files={"main.py": textwrap.dedent(SCRIPT)},
    )
    integration = integration_publish_folder(path=root, publisher=org_admin).version.integration
    space = SpaceFactory(organization=organization)
    return installation_create(
        user=org_admin, integration=integration, organization=organization, space=space
    )


def fetch_lines(installation):
    return IntegrationLog.objects.filter(installation=installation, kind="fetch")


def answered_line(installation, request: str) -> CallRecord:
    """The log line of a ``fetch`` of ``request`` answered 200."""
    return CallRecord(
        version=installation.integration.versions.get(),
        installation=installation,
        kind="fetch",
        event="",
        request=request,
        started_at=installation.created_at,
        outcome="ok",
        status=200,
        duration_ms=3,
    )


@on_postgresql
@pytest.mark.slow
@pytest.mark.django_db(transaction=True)
def test_the_endpoints_lines_show_once_the_interval_passed_written_together(
    runtime, installed, settings
):
    settings.RUNTIME_LOG_BATCH_SECONDS = 1.5  # the five calls below end well within it
    for number in range(5):
        answer = requests.get(installation_public_endpoint(installed) + f"/n{number}", timeout=20)
        assert answer.json() == {"route": f"/n{number}"}
    wait_until(lambda: fetch_lines(installed).count() == 5, timeout=10)
    lines = fetch_lines(installed).order_by("id")
    assert [line.request for line in lines] == [f"GET /n{number}" for number in range(5)]
    assert {(line.status, line.outcome) for line in lines} == {(200, "ok")}
    with connection.cursor() as cursor:  # one transaction wrote them: one xmin
        cursor.execute(
            "SELECT count(DISTINCT xmin::text) FROM integrations_integrationlog"
            " WHERE installation_id = %s AND kind = 'fetch'",
            [installed.pk],
        )
        assert cursor.fetchone()[0] == 1


@on_postgresql
@pytest.mark.parametrize("written_by", ["the writer's thread", "a flush"])
@pytest.mark.django_db(transaction=True)
def test_a_line_the_database_refuses_loses_no_other_line_of_its_batch(
    installed, caplog, settings, written_by
):
    record = answered_line(installed, "GET /kept")
    orphan = Installation(pk="x" * 20)  # no such row: its line's reference is refused
    refused = CallRecord(**{**record.__dict__, "installation": orphan, "request": "GET /gone"})
    if written_by == "a flush":
        log_batches.writer.add([refused, record])
        log_batches.writer.flush()
    else:  # its own connection, in autocommit
        settings.RUNTIME_LOG_BATCH_SECONDS = 0.05
        log_batches.writer.add([refused, record])
        wait_until(lambda: fetch_lines(installed).exists(), timeout=10)
    assert [line.request for line in fetch_lines(installed)] == ["GET /kept"]
    assert not IntegrationLog.objects.filter(request="GET /gone").exists()
    assert "the call's log line was not stored" in caplog.text


def test_without_postgresql_or_an_interval_each_line_is_written_with_its_answer(settings):
    settings.RUNTIME_LOG_BATCH_SECONDS = 0.05
    assert log_batches.batching() is (connection.vendor == "postgresql")
    settings.RUNTIME_LOG_BATCH_SECONDS = 0
    assert log_batches.batching() is False


@on_postgresql
@pytest.mark.django_db(transaction=True)
def test_the_writer_waits_even_once_batching_is_off(settings):
    settings.RUNTIME_LOG_BATCH_SECONDS = 0  # as a test's setting restored while it runs
    log_batches.writer.add([])  # its thread running
    thread = log_batches.writer._thread
    time.sleep(0.5)
    assert thread.is_alive()
    spent = _thread_cpu_seconds(thread.native_id)
    assert spent < 0.1, f"the writer spun: {spent:.2f} s of CPU in 0.5 s"


def _thread_cpu_seconds(native_id: int) -> float:
    with open(f"/proc/self/task/{native_id}/stat", "rb") as handle:
        fields = handle.read().rpartition(b")")[2].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


@on_postgresql
@pytest.mark.django_db(transaction=True)
def test_a_batch_stores_every_value_as_given_whatever_its_characters(installed):
    # The batch is written with COPY: its text format's own marks (tab, newline, backslash,
    # \N for NULL) in a line's texts are stored as written, and a NULL stays a NULL.
    printed = "tab\there\nnew line \\N not null\r\n\\. end é 🚀"
    record = CallRecord(
        version=installed.integration.versions.get(),
        installation=installed,
        kind="fetch",
        event="",
        request="GET /odd\\path\t",
        started_at=installed.created_at,
        outcome="error",
        status=None,
        duration_ms=None,
        output=printed,
        error="Traceback\n\tline \\x00",
        test=True,
    )
    log_batches.writer.add([record])
    log_batches.writer.flush()
    line = fetch_lines(installed).get()
    assert (line.request, line.output, line.error) == (
        "GET /odd\\path\t",
        printed,
        "Traceback\n\tline \\x00",
    )
    assert (line.status, line.duration_ms, line.test, line.outcome) == (None, None, True, "error")
    assert line.time == installed.created_at
    assert line.version == installed.integration.versions.get().number


@on_postgresql
@pytest.mark.django_db(transaction=True)
def test_only_the_writers_own_session_commits_without_waiting_for_the_disk(installed):
    """A log line is a diagnostic: the writer thread's session does not wait for the disk at
    commit. A flush on a caller's thread sets it for its own transaction only: the caller's
    connection keeps waiting, as every write of the platform must."""
    record = answered_line(installed, "GET /by-the-writer")
    seen = []

    def as_the_writers_thread():  # its write, on a connection of this thread's own
        try:
            log_batches.writer._copy_unsynchronized([record])
            with connection.cursor() as cursor:
                cursor.execute("SHOW synchronous_commit")
                seen.append(cursor.fetchone())
        finally:
            connection.close()

    thread = threading.Thread(target=as_the_writers_thread)
    thread.start()
    thread.join(timeout=20)
    assert seen == [("off",)]
    assert fetch_lines(installed).filter(request="GET /by-the-writer").exists()

    flushed = CallRecord(**{**record.__dict__, "request": "GET /by-a-flush"})
    log_batches.writer.add([flushed])
    log_batches.writer.flush()
    assert fetch_lines(installed).filter(request="GET /by-a-flush").exists()
    with connection.cursor() as cursor:
        cursor.execute("SHOW synchronous_commit")
        assert cursor.fetchone() == ("on",)
