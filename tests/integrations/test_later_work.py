"""What a request leaves for after its answer, done by a thread of the web process
(``RUNTIME_AFTER_ANSWER_THREAD``, PostgreSQL): the response closes without waiting for it, a
failing task holds up no other, too much waiting is dropped; off, or on SQLite, the request's
own thread does it as the response closes. And a component action's markup, kept so, answers
the render that follows."""

import logging
import threading

import pytest
from django.db import connection
from django.http import HttpResponse

from integrations.gateway import later_work as later_work_module
from integrations.gateway.call_log import after_answer, answer_held, later
from integrations.models import IntegrationLog
from tests.conftest import wait_until

on_postgresql = pytest.mark.skipif(
    connection.vendor != "postgresql", reason="later work has a thread on PostgreSQL only"
)


def answered(*tasks) -> HttpResponse:
    """A view's response with ``tasks`` left for later, closed as the server closes it."""
    with answer_held() as held:
        for task in tasks:
            later(task)
    response = after_answer(HttpResponse("answered"), held)
    response.close()
    return response


@on_postgresql
def test_the_response_closes_without_waiting_for_its_work(settings):
    settings.RUNTIME_AFTER_ANSWER_THREAD = True
    release, done = threading.Event(), []

    def slow_keep():
        release.wait(10)
        done.append(threading.current_thread().name)

    answered(slow_keep)  # returns at once: the work waits on another thread
    assert done == []
    release.set()
    wait_until(lambda: done == ["later work"], timeout=5)


@on_postgresql
def test_a_failing_task_is_logged_and_holds_up_no_other(settings, caplog):
    settings.RUNTIME_AFTER_ANSWER_THREAD = True
    done = []

    def failing():
        raise ConnectionError("the cache is gone")

    with caplog.at_level(logging.ERROR, logger=later_work_module.__name__):
        answered(failing, lambda: done.append("same request"))
        answered(lambda: done.append("next request"))
        wait_until(lambda: done == ["same request", "next request"], timeout=5)
    assert "later work failed" in caplog.text and "the cache is gone" in caplog.text


@on_postgresql
def test_work_past_what_may_wait_is_dropped(settings, monkeypatch, caplog):
    settings.RUNTIME_AFTER_ANSWER_THREAD = True
    monkeypatch.setattr(later_work_module, "MOST_WAITING", 2)
    release, started, done = threading.Event(), threading.Event(), []

    def blocking():
        started.set()
        release.wait(10)

    answered(blocking)
    started.wait(5)  # the thread is busy: what follows waits
    with caplog.at_level(logging.WARNING, logger=later_work_module.__name__):
        for number in range(4):
            answered(lambda number=number: done.append(number))
    assert caplog.text.count("later work dropped") == 1  # once, not once a request
    release.set()
    wait_until(lambda: done == [0, 1], timeout=5)


@pytest.mark.parametrize("thread", [False, True])
def test_without_the_thread_the_requests_own_thread_does_it_as_the_response_closes(
    settings, thread
):
    """Off, or on SQLite whatever the setting: done before ``close`` returns, here."""
    settings.RUNTIME_AFTER_ANSWER_THREAD = thread
    if thread and connection.vendor == "postgresql":
        pytest.skip("on PostgreSQL the setting on hands it to the thread")
    done = []
    answered(lambda: done.append(threading.current_thread().name))
    assert done == [threading.current_thread().name]


@on_postgresql
@pytest.mark.slow
def test_an_actions_markup_kept_by_the_thread_answers_the_next_render(
    settings, runtime, org_admin, organization
):
    from integrations.services import integration_publish_folder
    from integrations.services.installations import installation_create
    from tests.api_helpers import API, api_client
    from tests.factories import SpaceFactory
    from tests.integrations.test_components_api import EXAMPLE

    settings.RUNTIME_AFTER_ANSWER_THREAD = True
    counter = integration_publish_folder(path=EXAMPLE, publisher=org_admin).version.integration
    space = SpaceFactory(organization=organization)
    installation = installation_create(
        user=org_admin, integration=counter, organization=organization, space=space
    )
    client = api_client(org_admin)
    url = f"{API}/installations/{installation.pk}/components/counter/render/"
    calls = IntegrationLog.objects.filter(kind="ui_render")
    pressed = client.post(url, {"instance": "kept", "action": {"action": "increment"}})
    assert pressed.status_code == 200 and calls.count() == 1
    # The thread takes work in turn: once this has run, the action's markup is kept.
    behind = threading.Event()
    later_work_module.later_work.add([behind.set])
    assert behind.wait(5)
    rendered = client.post(url, {"instance": "kept"})
    assert rendered.json()["state"] == {"count": 1}
    assert calls.count() == 1  # from the cache: no runtime call
