import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from tests.docplatform.sites.conftest import (  # noqa: F401 - the sites' fixtures
    handbook,
    private,
    site,
    sites_host,
    unlisted,
    visitor,
)


@pytest.fixture
def document_server():
    """A real local HTTP server answering ``GET /<name>`` with the bodies set in ``served``
    (``served["/spec.yaml"] = (200, "text")``; a status of 0 never answers); returns (its
    base URL, served)."""
    served: dict[str, tuple[int, str]] = {}
    stopped = threading.Event()

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self):
            status, body = served.get(self.path, (404, "not here"))
            if status == 0:  # a server that never answers, until the test is over
                stopped.wait(10)
                return
            data = body.encode()
            self.send_response(status)
            if 300 <= status < 400:
                self.send_header("Location", "http://example.com/")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, *args):
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", served
    finally:
        stopped.set()
        server.shutdown()
        server.server_close()
