"""Several runtime hosts: the host of a version by rendezvous hashing, hosts marked down and
probed again, and the client's transport (the next host only when nothing was sent, answers
read to RUNTIME_MAX_ANSWER_MB at most)."""

import os
import socket
import threading
import traceback
from collections import Counter
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from unittest.mock import ANY

import pytest

from integrations.gateway import client, hosts
from integrations.gateway.failures import IntegrationFault, PlatformFault
from integrations.gateway.hosts import HostMarks, host_urls, rendezvous_order
from tests.conftest import wait_until

MEBIBYTE = 1024 * 1024
HOSTS = [f"http://runtime-{n}:8100" for n in range(1, 5)]
KEYS = [f"{n:064x}" for n in range(4000)]


def first_choices(hosts_: list[str]) -> dict[str, str]:
    return {key: rendezvous_order(key, hosts_)[0] for key in KEYS}


def test_the_setting_lists_one_host_or_several():
    assert host_urls("http://a:1") == ("http://a:1",)
    assert host_urls(" http://a:1/, http://b:2 ,") == ("http://a:1", "http://b:2")


def test_a_key_always_gets_the_same_order_whatever_the_list_order():
    order = rendezvous_order(KEYS[7], HOSTS)
    assert sorted(order) == sorted(HOSTS)
    assert rendezvous_order(KEYS[7], list(reversed(HOSTS))) == order
    assert rendezvous_order(KEYS[7], HOSTS) == order


def test_versions_spread_evenly():
    counts = Counter(first_choices(HOSTS).values())
    assert set(counts) == set(HOSTS)
    for count in counts.values():
        assert abs(count - len(KEYS) / 4) < len(KEYS) / 4 * 0.1, counts


def test_adding_or_removing_a_host_moves_only_its_versions():
    three, four = first_choices(HOSTS[:3]), first_choices(HOSTS)
    moved = [key for key in KEYS if three[key] != four[key]]
    assert all(four[key] == HOSTS[3] for key in moved)  # only to the new host
    assert abs(len(moved) - len(KEYS) / 4) < len(KEYS) / 4 * 0.1  # about 1/n of them
    without = first_choices([HOSTS[0], HOSTS[2], HOSTS[3]])
    moved = [key for key in KEYS if four[key] != without[key]]
    assert {four[key] for key in moved} == {HOSTS[1]}  # only the removed host's versions
    # ... and each to its own second choice: the versions spread over the others.
    assert all(without[key] == rendezvous_order(key, HOSTS)[1] for key in moved)


class Clock:
    def __init__(self):
        self.now = 100.0

    def __call__(self):
        return self.now


def test_a_host_marked_down_is_skipped_until_a_probe_finds_it_up():
    probes, up = [], {"http://a": False}
    clock = Clock()
    marks = HostMarks(lambda host: probes.append(host) or up[host], interval=2, clock=clock)
    key = next(
        key for key in KEYS if rendezvous_order(key, ["http://a", "http://b"])[0] == "http://a"
    )
    assert list(marks.candidates(key, ["http://a", "http://b"])) == ["http://a", "http://b"]
    marks.mark_down("http://a")
    assert list(marks.candidates(key, ["http://a", "http://b"])) == ["http://b"]
    assert probes == []  # not before the interval
    clock.now += 2
    assert list(marks.candidates(key, ["http://a", "http://b"])) == ["http://b"]
    assert list(marks.candidates(key, ["http://a", "http://b"])) == ["http://b"]
    assert probes == ["http://a"]  # once per interval, whoever asks
    up["http://a"] = True
    clock.now += 2
    assert list(marks.candidates(key, ["http://a", "http://b"])) == ["http://a", "http://b"]
    assert not marks.is_down("http://a")


def test_every_host_marked_down_is_still_tried_and_an_answer_clears_the_mark():
    marks = HostMarks(lambda host: False, clock=Clock())
    for host in HOSTS:
        marks.mark_down(host)
    assert list(marks.candidates(KEYS[0], HOSTS)) == rendezvous_order(KEYS[0], HOSTS)
    marks.answered(HOSTS[2])
    assert list(marks.candidates(KEYS[0], HOSTS)) == [HOSTS[2]]


def test_candidates_are_looked_at_lazily():
    probes = []
    marks = HostMarks(lambda host: probes.append(host) or False, interval=0, clock=Clock())
    first, second = rendezvous_order(KEYS[0], HOSTS)[:2]
    marks.mark_down(second)
    assert next(marks.candidates(KEYS[0], HOSTS)) == first
    assert probes == []  # the second host is not probed while the first takes the call


# The client's transport, against local servers.


class Host(ThreadingHTTPServer):
    """A local host answering every POST with ``answer`` (status, headers, body), or never
    (``silent``); it records the paths it was sent."""

    daemon_threads = True

    def __init__(self, answer=(200, {}, b"{}"), silent=False):
        self.answer, self.silent, self.received = answer, silent, []
        self.release = threading.Event()
        super().__init__(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server_address[1]}"
        threading.Thread(target=self.serve_forever, daemon=True).start()

    def stop(self):
        self.release.set()
        self.shutdown()
        self.server_close()


class Handler(BaseHTTPRequestHandler):
    def do_POST(self):
        self.rfile.read(int(self.headers["Content-Length"]))
        self.server.received.append(self.path)
        if self.server.silent:
            self.server.release.wait(10)
            return
        status, headers, body = self.server.answer
        self.send_response(status)
        for name, value in {"Content-Length": str(len(body)), **headers}.items():
            if value is not None:  # None: no such header
                self.send_header(name, value)
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self):
        self.send_response(200 if self.path == "/health" else 404)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, *args):
        pass


def refusing_url() -> str:
    """A port where nothing listens (connection refused)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return f"http://127.0.0.1:{probe.getsockname()[1]}"


@pytest.fixture
def fresh_marks(monkeypatch):
    marks = HostMarks(hosts.healthy)
    monkeypatch.setattr(hosts, "marks", marks)
    return marks


@pytest.fixture
def host():
    server = Host()
    yield server
    server.stop()


def key_first_on(url: str, urls: list[str]) -> str:
    return next(key for key in KEYS if rendezvous_order(key, urls)[0] == url)


def post(key: str) -> client.HostAnswer:
    return client._post("/integrations/echo/v1", key, client.Outgoing(body=b"{}"))


@pytest.mark.slow
def test_a_host_that_refuses_is_skipped_and_the_call_goes_to_the_next(settings, fresh_marks, host):
    refusing = refusing_url()
    settings.RUNTIME_URL = f"{refusing},{host.url}"
    key = key_first_on(refusing, [refusing, host.url])
    answer = post(key)
    assert (answer.host, answer.status_code, host.received) == (
        host.url,
        200,
        ["/integrations/echo/v1"],
    )
    assert fresh_marks.is_down(refusing)
    assert post(key).host == host.url  # skipped now, without trying it
    assert len(host.received) == 2


@pytest.mark.slow
def test_a_call_that_may_have_reached_a_host_is_not_sent_again(settings, fresh_marks, host):
    silent = Host(silent=True)
    try:
        settings.RUNTIME_URL = f"{silent.url},{host.url}"
        settings.RUNTIME_RESPONSE_TIMEOUT = 0.3
        with pytest.raises(PlatformFault) as failed:
            post(key_first_on(silent.url, [silent.url, host.url]))
        assert failed.value.message == "the runtime host cannot be reached (ReadTimeout)"
        assert silent.received == ["/integrations/echo/v1"] and host.received == []
        assert not fresh_marks.is_down(silent.url)
    finally:
        silent.stop()


def test_every_host_refusing_is_a_platform_fault(settings, fresh_marks):
    settings.RUNTIME_URL = f"{refusing_url()},{refusing_url()}"
    with pytest.raises(PlatformFault) as failed:
        post(KEYS[0])
    assert failed.value.code == "runtime_unavailable"
    assert failed.value.message == "the runtime host cannot be reached (ConnectionError)"


@pytest.mark.slow
@pytest.mark.parametrize("declared", [True, False], ids=["content-length", "until-close"])
def test_an_answer_over_the_limit_is_not_read_past_it(settings, fresh_marks, declared):
    headers = {"X-Runtime-Outcome": "ok"} | ({} if declared else {"Content-Length": None})
    server = Host(answer=(200, headers, b"x" * 3000))
    try:
        settings.RUNTIME_URL = server.url
        settings.RUNTIME_MAX_ANSWER_MB = 2000 / MEBIBYTE
        with pytest.raises(IntegrationFault) as failed:
            post(KEYS[0])
        assert (failed.value.code, failed.value.status) == ("answer_too_large", 502)
        assert failed.value.message == f"the integration's answer is over {2000 / MEBIBYTE:g} MB"
        settings.RUNTIME_MAX_ANSWER_MB = 3000 / MEBIBYTE  # the limit itself is read
        assert post(KEYS[0]).content == b"x" * 3000
    finally:
        server.stop()


@pytest.mark.slow
def test_the_default_limit_is_10_mb(settings, fresh_marks):
    server = Host(answer=(200, {"Content-Length": None}, b"x" * (11 * MEBIBYTE)))
    try:
        settings.RUNTIME_URL = server.url
        with pytest.raises(IntegrationFault) as failed:
            post(KEYS[0])
        assert failed.value.message == "the integration's answer is over 10 MB"
    finally:
        server.stop()


@pytest.mark.slow
def test_a_frames_host_that_refuses_is_skipped_and_the_call_goes_to_the_next(
    settings, fresh_marks, runtime_host, tmp_path
):
    missing = f"unix://{tmp_path / 'no-host.sock'}"  # no socket: nothing reached it
    settings.RUNTIME_URL = f"{missing},{runtime_host.frames_url}"
    key = key_first_on(missing, [missing, runtime_host.frames_url])
    answer = client._post("/health", key, client.Outgoing(body=b""))
    assert (answer.host, answer.status_code) == (runtime_host.frames_url, 200)
    assert fresh_marks.is_down(missing)


@pytest.mark.slow
def test_a_forked_child_opens_a_connection_of_its_own_and_leaves_its_parents(
    settings, runtime_host
):
    url = runtime_host.frames_url
    settings.RUNTIME_URL = url
    # a connection and the host's answer within 10 s: the 3 s and the probe's 1 s are short
    # for the session's host while a full run keeps it busy
    settings.RUNTIME_CONNECT_TIMEOUT = 10
    parent = hosts.connection(url)
    assert hosts.health(url, 10) == (200, ANY)
    # Another thread's connection, open while the fork happens: none of the child's.
    others, forked = [], threading.Event()

    def other_thread():  # its connection held by its thread alone
        others.append(hosts.connection(url)._socket.fileno())
        forked.wait(30)

    other = threading.Thread(target=other_thread)
    other.start()
    wait_until(lambda: others, timeout=10)
    other_descriptor = others[0]
    child = os.fork()
    if child == 0:  # the child: no pytest from here on
        code = 1  # an exception (its traceback on the captured stderr)
        try:
            try:
                os.fstat(other_descriptor)
                code = 4  # the other thread's connection still open here
            except OSError:
                own = hosts.connection(url)
                answered = hosts.health(url, 10)
                code = 2 if own is parent else 0 if answered and answered[0] == 200 else 3
        except BaseException:
            os.write(2, traceback.format_exc().encode())
        finally:
            os._exit(code)
    forked.set()
    other.join()
    _, status = os.waitpid(child, 0)
    # 1: it raised, 2: the parent's, 3: no answer, 4: another thread's kept open
    assert os.waitstatus_to_exitcode(status) == 0
    assert hosts.connection(url) is parent and not parent.broken
    assert hosts.health(url, 10) == (200, ANY)
