"""Pools fit the demand: they grow with concurrent calls up to RUNTIME_WORKERS_MAX, shrink to
no worker when idle, all of them stay under the host-wide cap, which they share fairly, and
a call that waits too long is answered 503 ``busy`` with ``Retry-After``."""

import os
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor

import pytest
import requests

from integrations.runtime.config import MEBIBYTE, HostConfig

from .conftest import start_host
from .support import EnvelopeClient
from .test_isolation import descendants

SCRIPT = """
import os, time
from docplatform_sdk import Response, create_integration

WORKER = os.urandom(8).hex()

def fetch(request, context):
    time.sleep(float(request.query.get("sleep", "0")))
    return Response.json({"worker": WORKER})

integration = create_integration(fetch=fetch)
"""


def event(sleep: float = 0) -> dict:
    url = f"http://p/x?sleep={sleep}"
    return {
        "type": "fetch",
        "eventId": "e",
        "request": {"method": "GET", "url": url, "headers": {}},
    }


@pytest.fixture
def host(request, tmp_path_factory):
    """A host with the test's settings (``@pytest.mark.parametrize("host", [{...}])``)."""
    settings = {"RUNTIME_CALL_TIMEOUT": "10", "RUNTIME_QUEUE_TIMEOUT": "10", **request.param}
    running = start_host(tmp_path_factory, **settings)
    yield running
    running.stop()


def call(host, name: str, sleep: float = 0):
    """One call from a client of its own (they run in threads); the answer and its seconds."""
    started = time.monotonic()
    answer = EnvelopeClient(host).call(name, SCRIPT, event(sleep))
    return answer, time.monotonic() - started


def calls(host, names: list[str], sleep: float) -> list:
    with ThreadPoolExecutor(max_workers=len(names)) as executor:
        return list(executor.map(lambda name: call(host, name, sleep), names))


def workers(host) -> list[str]:
    """The sandboxed interpreters of the host's workers, spares included."""
    interpreter = os.path.realpath(sys.executable).encode()
    found = []
    for pid in descendants(host.process.pid):
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as cmdline:
                arguments = cmdline.read().split(b"\0")
        except OSError:
            continue
        if arguments[0] == interpreter and b"docplatform_sdk.worker" in b" ".join(arguments):
            found.append(pid)
    return found


def health(host) -> dict:
    """What the host's ``/health`` says of its workers."""
    return requests.get(f"{host.url}/health", timeout=5).json()["workers"]


def bound(host) -> int:
    """The workers bound to a version (alive or starting), by the host's ``/health``."""
    return sum(pool["workers"] for pool in health(host)["pools"])


class Sampler:
    """The most workers bound to a version seen at once, while the block runs."""

    def __init__(self, host):
        self.host, self.most, self._done = host, 0, threading.Event()

    def __enter__(self):
        def sample():
            while not self._done.wait(0.05):
                self.most = max(self.most, bound(self.host))

        self._thread = threading.Thread(target=sample, daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *exc):
        self._done.set()
        self._thread.join()


@pytest.mark.slow
@pytest.mark.parametrize("host", [{"RUNTIME_WORKERS_MAX": "3"}], indirect=True)
def test_a_pool_grows_with_concurrent_calls_up_to_its_maximum(host):
    one_at_a_time = {call(host, "grow")[0].json()["worker"] for _ in range(3)}
    assert len(one_at_a_time) == 1
    answers = calls(host, ["grow"] * 8, sleep=1)
    assert [answer.status_code for answer, _ in answers] == [200] * 8
    assert len({answer.json()["worker"] for answer, _ in answers}) == 3


@pytest.mark.slow
@pytest.mark.parametrize(
    "host",
    [{"RUNTIME_WORKER_IDLE_SECONDS": "1", "RUNTIME_SPARE_WORKERS": "0"}],
    indirect=True,
)
def test_a_pool_shrinks_to_no_worker_when_idle(host):
    answers = calls(host, ["shrink"] * 2, sleep=1.5)  # longer than a worker takes to start
    first = {answer.json()["worker"] for answer, _ in answers}
    assert len(first) == 2
    assert len(workers(host)) == 2
    deadline = time.monotonic() + 10
    while workers(host) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert workers(host) == [], host.log()
    answer, _ = call(host, "shrink")  # the host still has the bundle: a new worker loads it
    assert answer.status_code == 200
    assert answer.json()["worker"] not in first


@pytest.mark.slow
@pytest.mark.parametrize(
    "host", [{"RUNTIME_MAX_WORKERS": "3", "RUNTIME_SPARE_WORKERS": "1"}], indirect=True
)
def test_the_host_wide_cap_holds_and_a_spare_is_kept_beside_it(host):
    with Sampler(host) as sampler:
        answers = calls(host, ["capped-a"] * 4 + ["capped-b"] * 4, sleep=0.5)
    assert [answer.status_code for answer, _ in answers] == [200] * 8
    assert 1 < sampler.most <= 3
    # The cap is full of idle workers, and a spare is ready all the same.
    deadline = time.monotonic() + 10
    while health(host)["spares"] < 1 and time.monotonic() < deadline:
        time.sleep(0.1)
    assert health(host)["spares"] == 1
    assert len(workers(host)) == bound(host) + 1


@pytest.mark.slow
@pytest.mark.parametrize(
    "host",
    [{"RUNTIME_MEMORY_BUDGET_MB": "1", "RUNTIME_MAX_WORKERS": "8", "RUNTIME_SPARE_WORKERS": "0"}],
    indirect=True,
)
def test_over_the_memory_budget_idle_workers_stop_and_no_second_one_starts(host):
    first, _ = call(host, "memory")
    # The host measures its workers about once a second: this one is over the budget alone.
    deadline = time.monotonic() + 10
    while bound(host) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert bound(host) == 0
    answers = calls(host, ["memory"] * 3, sleep=0.3)
    assert [answer.status_code for answer, _ in answers] == [200] * 3
    served_by = {answer.json()["worker"] for answer, _ in answers}
    assert len(served_by) == 1
    assert first.json()["worker"] not in served_by


@pytest.mark.slow
@pytest.mark.parametrize(
    "host", [{"RUNTIME_MAX_WORKERS": "2", "RUNTIME_SPARE_WORKERS": "1"}], indirect=True
)
def test_the_least_recently_used_idle_worker_makes_room(host):
    def worker_of(name):
        answer, _ = call(host, name)
        assert answer.status_code == 200, answer.text
        return answer.json()["worker"]

    a, b = worker_of("recent-a"), worker_of("recent-b")
    assert worker_of("recent-a") == a  # b is now the least recently used
    worker_of("recent-c")
    assert worker_of("recent-a") == a
    assert worker_of("recent-b") != b


@pytest.mark.slow
@pytest.mark.parametrize("host", [{"RUNTIME_SPARE_WORKERS": "2"}], indirect=True)
def test_twenty_integrations_called_in_turn_stay_warm(host):
    names = [f"breadth-{number}" for number in range(20)]
    for name in names:  # each one's first call loads its code
        assert call(host, name)[0].status_code == 200
    loads = health(host)["loads"]
    assert loads == 20
    for _ in range(2):
        for name in names:
            assert call(host, name)[0].status_code == 200
    assert health(host)["loads"] == loads  # no call started a worker
    assert bound(host) == 20


@pytest.mark.slow
@pytest.mark.parametrize(
    "host", [{"RUNTIME_MAX_WORKERS": "2", "RUNTIME_SPARE_WORKERS": "0"}], indirect=True
)
def test_an_integration_waiting_gets_a_worker_from_one_holding_the_cap(host):
    # Integration A holds both slots, busy, with four calls waiting.
    with ThreadPoolExecutor(max_workers=6) as executor:
        hammering = [executor.submit(call, host, "hog", 1.5) for _ in range(6)]
        time.sleep(0.5)
        answer, seconds = call(host, "quiet")
        assert answer.status_code == 200, answer.text
        # B waits for one of A's calls to end (1.5 s), not for A's queue (4.5 s).
        assert seconds < 3, seconds
        assert not all(future.done() for future in hammering)
        ends = [future.result() for future in hammering]
    assert [answer.status_code for answer, _ in ends] == [200] * 6
    # A's workers are idle now, and still fill the cap: one is stopped for B's first call.
    call(host, "hog")
    answer, seconds = call(host, "other")
    assert answer.status_code == 200
    assert seconds < 2, seconds


@pytest.mark.slow
@pytest.mark.parametrize(
    "host", [{"RUNTIME_MAX_WORKERS": "1", "RUNTIME_SPARE_WORKERS": "0"}], indirect=True
)
def test_a_new_version_takes_the_slot_of_the_previous_ones_idle_worker(host):
    assert call(host, "versioned")[0].status_code == 200
    started = time.monotonic()
    answer = EnvelopeClient(host).call("versioned", SCRIPT + "\n# version 2\n", event())
    assert answer.status_code == 200, answer.text
    assert time.monotonic() - started < 5  # not after the queue timeout (10 s)


@pytest.mark.slow
@pytest.mark.parametrize(
    "host",
    [{"RUNTIME_WORKERS_MAX": "1", "RUNTIME_QUEUE_TIMEOUT": "0.5", "RUNTIME_MAX_QUEUED": "1"}],
    indirect=True,
)
def test_a_call_waiting_too_long_is_answered_busy(host):
    call(host, "slow")
    with ThreadPoolExecutor(max_workers=3) as executor:
        running = executor.submit(call, host, "slow", 2)
        time.sleep(0.3)
        queued = executor.submit(call, host, "slow")
        time.sleep(0.1)
        refused, refused_in = call(host, "slow")  # one waits already: refused at once
        answer, waited = queued.result()
        assert running.result()[0].status_code == 200
    for busy in (answer, refused):
        assert busy.status_code == 503
        assert busy.json() == {"error": "busy"}
        assert busy.headers["X-Runtime-Outcome"] == "busy"
        assert busy.headers["Retry-After"] == "1"
    assert 0.4 < waited < 1.5, waited
    assert refused_in < 0.3, refused_in


@pytest.mark.parametrize("host", [{}], indirect=True)
def test_a_worker_dying_while_it_loads_fails_its_call_at_once(host):
    started = time.monotonic()
    answer = EnvelopeClient(host).call("dies", "import os\nos._exit(1)\n", event())
    assert answer.status_code == 502, answer.text
    assert time.monotonic() - started < 5  # not after the queue timeout (10 s)


def test_the_caps_default_from_the_memory_budget():
    def pools(**environment):
        return HostConfig.from_environ({"RUNTIME_SIGNING_KEY": "key", **environment}).pools

    budget = pools(RUNTIME_MEMORY_BUDGET_MB="200")
    assert budget.memory_budget_bytes == 200 * MEBIBYTE
    assert (budget.max_workers, budget.max_versions) == (10, 10)  # 20 MiB a worker
    assert pools(RUNTIME_MAX_MEMORY_MB="100").max_workers == 5  # the old name
    given = pools(RUNTIME_MEMORY_BUDGET_MB="200", RUNTIME_MAX_WORKERS="3")
    assert (given.max_workers, given.max_versions) == (3, 3)
    assert pools(RUNTIME_MAX_VERSIONS="7").max_versions == 7
    assert pools().memory_budget_bytes > 0  # half the machine's memory
