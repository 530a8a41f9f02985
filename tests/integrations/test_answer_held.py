"""What a request's calls leave for once its answer is sent (``call_log.answer_held``): work
held by ``later`` runs when the response is closed, after it was sent, and not before; with
no request holding it, or when the view fails, it runs at once."""

import pytest
from django.http import HttpResponse

from integrations.gateway.call_log import after_answer, answer_held, later


def test_held_work_runs_once_the_response_is_closed():
    done = []
    with answer_held() as held:
        later(lambda: done.append("kept"))
        assert done == []
    response = after_answer(HttpResponse("answer"), held)
    assert done == []  # the answer is not sent yet
    response.close()  # as the server does once it has sent it
    assert done == ["kept"]


def test_with_no_request_holding_it_work_runs_at_once():
    done = []
    later(lambda: done.append("now"))
    assert done == ["now"]


def test_a_view_that_fails_runs_its_held_work_before_the_error_goes_on():
    done = []
    with pytest.raises(RuntimeError), answer_held():
        later(lambda: done.append("kept"))
        raise RuntimeError("the view failed")
    assert done == ["kept"]
    later(lambda: done.append("after"))  # no longer held
    assert done == ["kept", "after"]
