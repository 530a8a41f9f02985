"""The platform's persistent connections to the runtime host (frames, ``RUNTIME_URL``
``unix:///path``), through a real host process and real sockets: the host answers many calls
at once on one connection, each by its id, a quick one before a slow one; a forged, stale,
replayed or oversized frame refused; a half-written frame never run; a connection dropped
mid-call failing only its own call; a late answer dropped; a connection the host ended while
idle found before a frame is sent on it."""

import contextlib
import json
import os
import resource
import socket
import threading
import time
from concurrent.futures import ThreadPoolExecutor

import pytest

from integrations.runtime import frames

from .conftest import start_host
from .support import bundle_of, environment_for

SCRIPT = """
import time

from docplatform_sdk import Response, create_integration

def fetch(request, context):
    time.sleep(float(request.query.get("sleep", "0")))
    size = int(request.query.get("size", "0"))
    if size:
        return Response(200, {"Content-Type": "text/plain"}, b"x" * size)
    return Response.json({"n": request.query.get("n", "")})

integration = create_integration(fetch=fetch)
"""
NAME = "framed"
LIMIT = 10 * 1024 * 1024


def fields_for(query: str = "", bundle: bool = True, name: str = NAME) -> list[bytes | None]:
    fields: list[bytes | None] = [None] * frames.REQUEST_FIELDS
    fields[frames.PATH] = f"/integrations/{name}/v1".encode()
    event = {
        "type": "fetch",
        "eventId": "e",
        "request": {"method": "GET", "url": f"http://p/x?{query}", "headers": {}},
    }
    fields[frames.EVENT] = json.dumps(event).encode()
    fields[frames.ENVIRONMENT] = json.dumps(environment_for(name, SCRIPT)).encode()
    fields[frames.BUNDLE] = bundle_of(SCRIPT) if bundle else None
    return fields


def body_of(answer: frames.Answer) -> dict:
    return json.loads(answer.body)


def served(host) -> int:
    """The calls of ``NAME`` the host ran (its log line of each)."""
    time.sleep(0.2)  # written after the answer
    return host.log().count(f"integration={NAME} ")


@pytest.fixture(scope="module")
def runtime_host(tmp_path_factory):
    """The module's host, whose calls wait for a worker as long as the platform's do (the
    package's host gives up after 1 s: a loaded machine starts a worker slower)."""
    host = start_host(tmp_path_factory, RUNTIME_QUEUE_TIMEOUT="10")
    yield host
    host.stop()


@pytest.fixture(scope="module")
def connect(runtime_host):
    def connect_(url=None) -> frames.Connection:
        return frames.Connection(url or runtime_host.frames_url, runtime_host.signing_key, 5)

    with connect_() as warm:  # the code loaded, its workers started
        assert warm.call(fields_for("n=warm"), timeout=30, answer_limit=LIMIT).status == 200
    return connect_


class RawConnection:
    """A bare socket to the host: the hello read, frames written as given."""

    def __init__(self, host):
        self.socket = socket.socket(socket.AF_UNIX)
        self.socket.settimeout(10)
        self.socket.connect(str(host.socket_path))
        hello = b""
        while len(hello) < len(frames.HELLO) + frames.NONCE_BYTES:
            hello += self.socket.recv(64)
        self.nonce = hello[len(frames.HELLO) :]
        self.key = host.signing_key.encode()
        self.buffer = b""

    def frame(self, call_id, sequence, fields, key=None, now=None) -> bytes:
        return frames.encode_request(
            call_id, sequence, self.nonce, key or self.key, fields, now=now
        )

    def answer(self) -> tuple[int, int, list, bytes] | None:
        """The next answer (call id, status, headers, body); None once the host closed."""
        while True:
            if len(self.buffer) >= 4:
                (length,) = frames.LENGTH.unpack_from(self.buffer)
                if len(self.buffer) >= 4 + length:
                    frame, self.buffer = self.buffer[4 : 4 + length], self.buffer[4 + length :]
                    call_id, status = frames.ANSWER_HEAD.unpack_from(frame)
                    headers, body = frames._read_fields(memoryview(frame), frames.ANSWER_HEAD.size)
                    return call_id, status, json.loads(headers), body
            data = self.socket.recv(65536)
            if not data:
                return None
            self.buffer += data

    def close(self):
        self.socket.close()


def test_many_calls_at_once_on_one_connection_are_each_answered_by_their_id(runtime_host):
    raw = RawConnection(runtime_host)
    try:
        sent = {call_id: f"n={call_id * 7}" for call_id in range(1, 25)}
        raw.socket.sendall(
            b"".join(raw.frame(call_id, call_id, fields_for(q)) for call_id, q in sent.items())
        )
        answers = [raw.answer() for _ in sent]
    finally:
        raw.close()
    assert {call_id: (status, json.loads(body)["n"]) for call_id, status, _, body in answers} == {
        call_id: (200, str(call_id * 7)) for call_id in sent
    }


def test_a_quick_call_is_answered_before_a_slow_one_sent_first_on_the_same_connection(
    runtime_host,
):
    raw = RawConnection(runtime_host)
    try:
        raw.socket.sendall(raw.frame(1, 1, fields_for("n=slow&sleep=1.5")))
        time.sleep(0.2)  # the slow call on its worker first
        started = time.monotonic()
        raw.socket.sendall(raw.frame(2, 2, fields_for("n=quick")))
        first = raw.answer()
        quick_took = time.monotonic() - started
        second = raw.answer()
    finally:
        raw.close()
    assert [(first[0], first[1]), (second[0], second[1])] == [(2, 200), (1, 200)]
    assert quick_took < 1.3, quick_took


def host_threads(host) -> int:
    return len(os.listdir(f"/proc/{host.process.pid}/task"))


def test_calls_without_the_bundle_are_carried_on_the_event_loop_not_a_thread_each(
    tmp_path_factory,
):
    """The platform's calls once the host has the code (no bundle in the frame) are carried
    on the host's event loop: twenty at once on two workers, most of them waiting in the
    pool's queue, each get their own answer, and the host starts no thread for them (a
    thread per call, kept for the next ones, was the way before)."""
    host = start_host(tmp_path_factory, RUNTIME_QUEUE_TIMEOUT="10")
    try:
        with contextlib.ExitStack() as stack:
            connections = [
                stack.enter_context(frames.Connection(host.frames_url, host.signing_key, 5))
                for _ in range(20)
            ]
            first = connections[0].call(fields_for("n=load"), timeout=30, answer_limit=LIMIT)
            assert first.status == 200  # the code sent once, with the bundle
            before = host_threads(host)

            def call(n):  # each thread's calls on a connection of its own, as the platform's
                fields = fields_for(f"n={n}&sleep=0.05", bundle=False)
                return connections[n].call(fields, timeout=30, answer_limit=LIMIT)

            with ThreadPoolExecutor(20) as calls:
                for _ in range(2):
                    answers = list(calls.map(call, range(20)))
                    assert [body_of(a)["n"] for a in answers] == [str(n) for n in range(20)]
            time.sleep(0.5)  # a worker's start has its thread, which ends once it loaded
            assert host_threads(host) <= before + 1
    finally:
        host.stop()


def test_a_frame_signed_with_another_key_is_refused_and_the_connection_closed(
    runtime_host, connect
):
    before = served(runtime_host)
    raw = RawConnection(runtime_host)
    try:
        raw.socket.sendall(raw.frame(7, 1, fields_for("n=forged"), key=b"not-the-key"))
        call_id, status, headers, body = raw.answer()
        assert (call_id, status) == (7, 401)
        assert json.loads(body)["reason"] == "mismatch"
        assert ["X-Runtime-Outcome", "invalid_signature"] in headers
        assert raw.answer() is None  # closed
    finally:
        raw.close()
    assert served(runtime_host) == before


def test_a_replayed_frame_is_refused_on_its_connection_and_on_another(runtime_host, connect):
    before = served(runtime_host)
    raw = RawConnection(runtime_host)
    captured = raw.frame(1, 1, fields_for("n=once"))
    try:
        raw.socket.sendall(captured)
        assert raw.answer()[1] == 200
        raw.socket.sendall(captured)  # the same bytes again
        call_id, status, _, body = raw.answer()
        assert (call_id, status, json.loads(body)["reason"]) == (1, 401, "replayed")
        assert raw.answer() is None
    finally:
        raw.close()
    other = RawConnection(runtime_host)  # another connection: another nonce
    try:
        other.socket.sendall(captured)
        assert other.answer()[1:2] == (401,)
    finally:
        other.close()
    assert served(runtime_host) == before + 1


def test_a_frame_signed_long_ago_is_refused(runtime_host, connect):
    raw = RawConnection(runtime_host)
    try:
        raw.socket.sendall(raw.frame(3, 1, fields_for("n=stale"), now=time.time() - 3600))
        call_id, status, _, body = raw.answer()
        assert (call_id, status, json.loads(body)["reason"]) == (3, 401, "stale")
    finally:
        raw.close()


def test_a_frame_over_the_size_limit_is_refused_and_the_connection_kept(runtime_host, connect):
    raw = RawConnection(runtime_host)
    try:
        fields = fields_for("n=big")
        fields[frames.FETCH_BODY] = b"x" * (2 * 1024 * 1024)  # the host's limit: 1 MB
        raw.socket.sendall(raw.frame(5, 1, fields))
        call_id, status, _, body = raw.answer()
        assert (call_id, status, json.loads(body)["error"]) == (5, 413, "envelope_too_large")
        raw.socket.sendall(raw.frame(6, 2, fields_for("n=after-big")))  # its bytes skipped
        call_id, status, _, body = raw.answer()
        assert (call_id, status, json.loads(body)) == (6, 200, {"n": "after-big"})
    finally:
        raw.close()


def test_a_half_written_frame_waits_for_its_rest_and_is_never_run_without_it(runtime_host, connect):
    before = served(runtime_host)
    raw = RawConnection(runtime_host)
    try:
        frame = raw.frame(9, 1, fields_for("n=halves"))
        raw.socket.sendall(frame[: len(frame) // 2])
        time.sleep(0.3)
        raw.socket.sendall(frame[len(frame) // 2 :])
        assert raw.answer()[:2] == (9, 200)
        cut = raw.frame(10, 2, fields_for("n=cut"))
        raw.socket.sendall(cut[: len(cut) - 10])
    finally:
        raw.close()  # the rest never comes
    assert served(runtime_host) == before + 1  # the halves, not the cut frame
    with connect() as connection:  # the host serves on
        assert connection.call(fields_for("n=next"), timeout=30, answer_limit=LIMIT).status == 200


class Proxy:
    """A Unix socket (or, without ``path``, a TCP port) relaying one connection to the host's,
    which the test can cut; ``url`` is its frames URL."""

    def __init__(self, host, path=None):
        self.target = str(host.socket_path)
        if path is None:
            self.listener = socket.socket(socket.AF_INET)
            self.listener.bind(("127.0.0.1", 0))
            self.url = f"tcp://127.0.0.1:{self.listener.getsockname()[1]}"
        else:
            self.listener = socket.socket(socket.AF_UNIX)
            self.listener.bind(str(path))
            self.url = f"unix://{path}"
        self.listener.listen(1)
        self.sockets: list[socket.socket] = []
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self):
        client, _ = self.listener.accept()
        upstream = socket.socket(socket.AF_UNIX)
        upstream.connect(self.target)
        self.sockets += [client, upstream]
        for source, sink in ((client, upstream), (upstream, client)):
            threading.Thread(target=self._pipe, args=(source, sink), daemon=True).start()

    def _pipe(self, source, sink):
        try:
            while data := source.recv(65536):
                sink.sendall(data)
        except OSError:
            pass

    def cut(self):
        for sock in self.sockets:
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)
            sock.close()
        self.listener.close()


def test_a_connection_dropped_mid_call_fails_only_the_call_on_it(runtime_host, connect, tmp_path):
    proxy = Proxy(runtime_host, tmp_path / "proxy.sock")
    cut = connect(proxy.url)
    kept = connect()
    outcomes: dict[str, object] = {}

    def call(name, connection):
        try:
            # "kept" in a pool of its own: the other holds a worker of its own.
            fields = fields_for(f"n={name}&sleep=1", name=f"{NAME}-{name.split('-')[0]}")
            answer = connection.call(fields, timeout=30, answer_limit=LIMIT)
            outcomes[name] = body_of(answer)["n"]
        except frames.FrameError as error:
            outcomes[name] = type(error).__name__

    threads = [
        threading.Thread(target=call, args=(name, connection))
        for name, connection in (("cut", cut), ("kept", kept))
    ]
    for thread in threads:
        thread.start()
    time.sleep(0.3)
    proxy.cut()
    for thread in threads:
        thread.join(10)
    assert outcomes == {"cut": "ConnectionBroken", "kept": "kept"}
    assert cut.broken and not kept.broken
    with pytest.raises(frames.ConnectFailed):  # never used again: nothing is sent on it
        cut.call(fields_for("n=after"), timeout=5, answer_limit=LIMIT)
    kept.close()


def test_an_answer_over_the_callers_limit_is_skipped_and_the_connection_kept(connect):
    with connect() as connection:
        big = fields_for(f"size={2 * 1024 * 1024}")
        with pytest.raises(frames.AnswerTooLarge):
            connection.call(big, timeout=30, answer_limit=1000)
        after = connection.call(fields_for("n=after-large"), timeout=30, answer_limit=LIMIT)
        assert body_of(after)["n"] == "after-large"


def test_the_host_asks_for_the_bundle_in_frames_as_over_http(connect):
    with connect() as connection:
        unknown = fields_for("n=fresh", bundle=False, name="framed-fresh")
        answer = connection.call(unknown, timeout=30, answer_limit=LIMIT)
        assert answer.status == 409
        assert ("X-Runtime-Outcome", "bundle_required") in answer.headers


def test_an_answer_that_comes_after_its_caller_gave_up_is_dropped_and_the_connection_serves_on(
    connect,
):
    with connect() as connection:
        with pytest.raises(frames.AnswerTimeout):
            connection.call(fields_for("n=late&sleep=0.6"), timeout=0.2, answer_limit=LIMIT)
        assert not connection.broken
        time.sleep(1.0)  # the late answer has come: it is read, and dropped, first
        after = connection.call(fields_for("n=after-late"), timeout=30, answer_limit=LIMIT)
        assert body_of(after)["n"] == "after-late"
        with pytest.raises(frames.AnswerTimeout):  # and one still on its way meanwhile
            connection.call(fields_for("n=late-2&sleep=0.6"), timeout=0.2, answer_limit=LIMIT)
        during = connection.call(fields_for("n=during&sleep=0.8"), timeout=30, answer_limit=LIMIT)
        assert body_of(during)["n"] == "during"


@pytest.mark.parametrize("family", ["unix", "tcp"])
def test_a_connection_the_host_ended_while_idle_is_found_before_a_frame_is_sent_on_it(
    runtime_host, connect, tmp_path, family
):
    """Nothing of the next call reaches the host: it fails as a connection not made
    (ConnectFailed: the platform makes a new one, or goes to the next host), not as one broken
    mid-call (which may have reached it). Over TCP a frame written to a connection its peer
    closed is sent without an error: the end must be read first."""
    proxy = Proxy(runtime_host, tmp_path / "idle.sock" if family == "unix" else None)
    ended = connect(proxy.url)
    assert body_of(ended.call(fields_for("n=before"), timeout=30, answer_limit=LIMIT)) == {
        "n": "before"
    }
    before = served(runtime_host)
    proxy.cut()
    time.sleep(0.2)
    with pytest.raises(frames.ConnectFailed):
        ended.call(fields_for("n=never"), timeout=5, answer_limit=LIMIT)
    assert ended.broken
    assert served(runtime_host) == before


def open_files_limits(pid: int) -> tuple[int, int]:
    with open(f"/proc/{pid}/limits") as limits:
        line = next(line for line in limits if line.startswith("Max open files"))
    soft, hard = line.split()[3:5]
    return int(soft), int(hard)


@pytest.mark.slow
def test_a_host_started_under_a_low_open_files_limit_serves_a_connection_per_thread_past_it(
    tmp_path_factory,
):
    """The platform keeps a connection per thread: a host started with a soft limit of 128
    open files (the default is often 1,024) raises it to the hard one, and answers 300
    connections at once."""
    hard = resource.getrlimit(resource.RLIMIT_NOFILE)[1]
    if hard != resource.RLIM_INFINITY and hard < 1024:
        pytest.skip(f"the open files' hard limit is {hard}")
    host = start_host(tmp_path_factory, open_files=128)
    try:
        health: list[bytes | None] = [None] * frames.REQUEST_FIELDS
        health[frames.PATH] = b"/health"
        with contextlib.ExitStack() as stack:
            connections = [
                stack.enter_context(frames.Connection(host.frames_url, host.signing_key, 5))
                for _ in range(300)
            ]
            answers = [c.call(health, timeout=10, answer_limit=LIMIT) for c in connections]
        assert {answer.status for answer in answers} == {200}
        soft, hard = open_files_limits(host.process.pid)
        assert soft == hard
    finally:
        host.stop()
