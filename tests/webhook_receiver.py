"""A real local HTTP webhook receiver (the ``receiver`` fixture of tests/conftest.py): it
answers each POST as planned and keeps what it received."""

import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


@dataclass
class Received:
    path: str
    headers: dict
    body: bytes
    at: float


@dataclass
class Receiver:
    """Answers each POST with the next planned response (the last one repeats); a path can
    have a plan of its own."""

    server: ThreadingHTTPServer
    plan: list = field(default_factory=lambda: [(200, {}, b'{"ok":true}', 0.0)])
    plans_by_path: dict = field(default_factory=dict)
    requests: list = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_port}/hooks"

    def url_for(self, path: str) -> str:
        return f"http://127.0.0.1:{self.server.server_port}{path}"

    def respond(self, *responses, path=None):
        """Plan the answers (to ``path`` only, if given): each an int status or (status,
        headers, body, delay seconds)."""
        plan = [(r, {}, b"", 0.0) if isinstance(r, int) else (*r, 0.0)[:4] for r in responses]
        if path is None:
            self.plan = plan
        else:
            self.plans_by_path[path] = plan

    def next_response(self, path: str):
        with self.lock:
            plan = self.plans_by_path.get(path, self.plan)
            return plan.pop(0) if len(plan) > 1 else plan[0]

    def to(self, path: str) -> list[Received]:
        return [request for request in self.requests if request.path == path]

    def wait_for(self, count: int, timeout: float = 20.0) -> list[Received]:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if len(self.requests) >= count:
                return self.requests
            time.sleep(0.02)
        raise AssertionError(f"expected {count} requests, got {len(self.requests)}")


def _handler(receiver: Receiver):
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def do_POST(self):
            body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
            receiver.requests.append(
                Received(self.path, dict(self.headers.items()), body, time.monotonic())
            )
            status, headers, payload, delay = receiver.next_response(self.path)
            if delay:
                time.sleep(delay)
            self.send_response(status)
            for name, value in headers.items():
                self.send_header(name, value)
            self.send_header("Content-Length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)

        def log_message(self, format, *args):
            pass

    return Handler


def start_receiver() -> Receiver:
    """A receiver serving in a thread of its own; ``stop_receiver`` ends it."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), None)
    receiver = Receiver(server=server)
    server.RequestHandlerClass = _handler(receiver)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return receiver


def stop_receiver(receiver: Receiver) -> None:
    receiver.server.shutdown()
    receiver.server.server_close()
