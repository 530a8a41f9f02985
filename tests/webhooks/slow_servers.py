"""Receivers as slow as a test wants, on real sockets: one that drips its headers or its body
a few bytes at a time, one that never answers, and an address whose connections never
complete. They count what reached them and how many requests were open at once."""

import contextlib
import socket
import threading
import time
from collections import defaultdict
from dataclasses import dataclass, field

import pytest


@dataclass
class Request:
    path: str
    started: float
    ended: float | None = None


@dataclass
class SlowServer:
    """Answers by path: ``/drip-headers`` sends its status line, then a header line every
    ``interval`` seconds for ``lines`` lines; ``/drip-body`` sends its headers (a 1 MB body
    announced), then a byte every ``interval``; ``/hang`` reads the request and never answers;
    ``/slow`` answers 200 after ``delay`` seconds; any other path answers 200 at once."""

    interval: float = 0.2
    lines: int = 300
    delay: float = 1.0
    requests: list = field(default_factory=list)
    open_now: dict = field(default_factory=lambda: defaultdict(int))
    most_open: dict = field(default_factory=lambda: defaultdict(int))
    lock: threading.Lock = field(default_factory=threading.Lock)
    stopping: threading.Event = field(default_factory=threading.Event)
    port: int = 0
    listener: socket.socket | None = None

    def stop(self) -> None:
        """Hang up on every request and refuse new connections."""
        self.stopping.set()
        if self.listener is not None:
            self.listener.close()

    def url(self, path: str) -> str:
        return f"http://127.0.0.1:{self.port}{path}"

    def to(self, path: str) -> list[Request]:
        with self.lock:
            return [request for request in self.requests if request.path == path]

    def serve(self, listener: socket.socket) -> None:
        while not self.stopping.is_set():
            try:
                connection, _ = listener.accept()
            except OSError:
                return
            threading.Thread(target=self._answer, args=(connection,), daemon=True).start()

    def _answer(self, connection: socket.socket) -> None:
        with connection:
            while not self.stopping.is_set():
                path = _read_request(connection)
                if path is None:
                    return
                request = Request(path, time.monotonic())
                with self.lock:
                    self.requests.append(request)
                    self.open_now[path] += 1
                    self.most_open[path] = max(self.most_open[path], self.open_now[path])
                try:
                    keep_alive = self._respond(connection, path)
                except OSError:  # the client hung up: it gave up on us
                    keep_alive = False
                finally:
                    with self.lock:
                        request.ended = time.monotonic()
                        self.open_now[path] -= 1
                if not keep_alive:
                    return

    def _respond(self, connection: socket.socket, path: str) -> bool:
        if path == "/drip-headers":
            connection.sendall(b"HTTP/1.1 200 OK\r\n")
            for number in range(self.lines):
                if self.stopping.wait(self.interval):
                    return False
                connection.sendall(f"X-Drip-{number}: x\r\n".encode())
            return False
        if path == "/drip-body":
            connection.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 1000000\r\n\r\n")
            for _ in range(self.lines):
                if self.stopping.wait(self.interval):
                    return False
                connection.sendall(b"x")
            return False
        if path == "/hang":
            self.stopping.wait(120)
            return False
        if path == "/slow" and self.stopping.wait(self.delay):
            return False
        connection.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
        return True


def _read_request(connection: socket.socket) -> str | None:
    """Read one request (headers and a Content-Length body); its path, or None at the end."""
    data = b""
    while b"\r\n\r\n" not in data:
        try:
            chunk = connection.recv(65536)
        except OSError:
            return None
        if not chunk:
            return None
        data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    length = 0
    for line in lines[1:]:
        name, _, value = line.partition(":")
        if name.strip().lower() == "content-length":
            length = int(value)
    while len(body) < length:
        chunk = connection.recv(65536)
        if not chunk:
            return None
        body += chunk
    return lines[0].split(" ")[1]


@pytest.fixture
def slow_server():
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(64)
    server = SlowServer(port=listener.getsockname()[1], listener=listener)
    thread = threading.Thread(target=server.serve, args=(listener,), daemon=True)
    thread.start()
    yield server
    server.stop()


@pytest.fixture
def unconnectable():
    """A loopback address whose connections never complete: a listener that accepts nothing
    and whose backlog is full, so the kernel leaves each new handshake unanswered."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(0)
    port = listener.getsockname()[1]
    queued = socket.create_connection(("127.0.0.1", port))
    yield f"http://127.0.0.1:{port}/hooks"
    queued.close()
    listener.close()


@pytest.fixture
def tls_dripper():
    """An https URL whose server drips its TLS handshake: a record header announcing 16 KB,
    then a byte every 0.1 s (each read of the client's gets something, well within any
    per-read timeout)."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(8)
    stop = threading.Event()

    def drip(connection: socket.socket) -> None:
        with connection, contextlib.suppress(OSError):
            connection.recv(65536)  # the ClientHello
            connection.sendall(b"\x16\x03\x03\x40\x00")
            while not stop.wait(0.1):
                connection.sendall(b"\x02")

    def serve() -> None:
        while not stop.is_set():
            try:
                connection, _ = listener.accept()
            except OSError:
                return
            threading.Thread(target=drip, args=(connection,), daemon=True).start()

    threading.Thread(target=serve, daemon=True).start()
    yield f"https://127.0.0.1:{listener.getsockname()[1]}/hooks"
    stop.set()
    listener.close()
