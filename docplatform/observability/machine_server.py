"""A machine's own metrics endpoint, for a machine that runs Celery workers but no web server
(``manage.py metrics_serve``): ``GET /metrics`` with the scraper's token answers the counters of
this machine's processes (``metrics.scrape(shared=False)``: the outbox's gauges and the runtime
hosts' are the web server's to answer, once for every machine); anything else gets a 404, as
on the web server."""

import logging
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import urlsplit

from prometheus_client import CONTENT_TYPE_LATEST

from .metrics import scrape, scraper_authorized

logger = logging.getLogger(__name__)

#: Seconds a scraper's connection may stay silent before it is closed.
REQUEST_TIMEOUT = 10


class _Handler(BaseHTTPRequestHandler):
    server_version = "docplatform-metrics"
    sys_version = ""
    timeout = REQUEST_TIMEOUT

    def do_GET(self):
        authorized = scraper_authorized(self.headers.get("Authorization", ""))
        if urlsplit(self.path).path != "/metrics" or not authorized:
            self._not_found()
            return
        try:
            body = scrape(shared=False)
        except Exception:  # a folder that cannot be read: said, not a traceback
            logger.exception("metrics: this machine's counters could not be read")
            self._answer(503, b"this machine's metrics could not be read\n")
            return
        self._answer(200, body, CONTENT_TYPE_LATEST)

    def _not_found(self):
        self._answer(404, b"Not Found\n")

    do_HEAD = do_POST = do_PUT = do_PATCH = do_DELETE = do_OPTIONS = _not_found

    def _answer(self, status: int, body: bytes, content_type="text/plain; charset=utf-8"):
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Cache-Control", "no-store")
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def log_message(self, format, *args):
        logger.debug("metrics: %s - %s", self.address_string(), format % args)


def metrics_server(bind: str, port: int) -> ThreadingHTTPServer:
    """A server of this machine's metrics listening on ``bind``:``port`` (0: any free port);
    the caller runs ``serve_forever``."""
    server = ThreadingHTTPServer((bind, port), _Handler)
    server.daemon_threads = True
    return server
