"""The runtime host: a WSGI application serving the envelope protocol (DESIGN.md).

``POST /integrations/{name}/v1`` takes a signed envelope and answers with what the integration
answered; ``GET /health`` says the host is up. Integration code runs in worker processes
(``pool.py``), never here. Production: ``gunicorn --worker-class gthread --threads 16
'integrations.runtime.host:create_app()'``; development and tests:
``python -m integrations.runtime.host --port 8100``.

Environment: ``RUNTIME_SIGNING_KEY`` (required; comma-separated keys during a rotation),
``RUNTIME_WORKERS_PER_VERSION`` (2), ``RUNTIME_CALL_TIMEOUT`` (10 s), ``RUNTIME_QUEUE_TIMEOUT``
(10 s), ``RUNTIME_WORKER_MEMORY_MB`` (512), ``RUNTIME_WORKER_CPU_SECONDS`` (300, a worker's
lifetime CPU budget: it is replaced at half of it), ``RUNTIME_MAX_VERSIONS`` (64 pools),
``RUNTIME_MAX_ENVELOPE_MB`` (12), ``RUNTIME_SIGNATURE_TOLERANCE`` (300 s).
"""

import argparse
import atexit
import base64
import json
import logging
import os
import re
import shutil
import signal
import socketserver
import time
from dataclasses import dataclass
from http import HTTPStatus
from wsgiref.simple_server import WSGIRequestHandler, WSGIServer, make_server

from . import envelope, signing
from .pool import (
    PoolBusy,
    PoolRegistry,
    ScriptLoadError,
    WorkerCrashed,
    WorkerSettings,
    WorkerTimeout,
    prepare_sdk_path,
)

logger = logging.getLogger("integrations.runtime")

SUPPORTED_VERSIONS = ["v1"]
ENVELOPE_PATH = re.compile(r"^/integrations/(?P<name>[-\w]{1,64})/(?P<version>[^/]+)/?$", re.ASCII)
OUTCOME_HEADER = "X-Runtime-Outcome"
# Hop-by-hop headers belong to one connection; WSGI servers set them themselves.
UNFORWARDED_HEADERS = {
    "connection",
    "keep-alive",
    "proxy-authenticate",
    "proxy-authorization",
    "te",
    "trailer",
    "trailers",
    "transfer-encoding",
    "upgrade",
    "content-length",
    OUTCOME_HEADER.lower(),
}
MEBIBYTE = 1024 * 1024


@dataclass(frozen=True)
class HostConfig:
    signing_keys: list[str]
    workers_per_version: int = 2
    call_timeout: float = 10
    queue_timeout: float = 10
    worker_memory_mb: int = 512
    worker_cpu_seconds: int = 300
    max_versions: int = 64
    max_envelope_bytes: int = 12 * MEBIBYTE
    signature_tolerance: int = signing.DEFAULT_TOLERANCE

    @classmethod
    def from_environ(cls, environ=os.environ) -> "HostConfig":
        keys = [key.strip() for key in environ.get("RUNTIME_SIGNING_KEY", "").split(",")]
        keys = [key for key in keys if key]
        if not keys:
            raise RuntimeError("set RUNTIME_SIGNING_KEY, the key the platform signs envelopes with")

        def number(name: str, default, kind=int):
            raw = environ.get(name)
            try:
                value = kind(raw) if raw else default
            except ValueError:
                raise RuntimeError(f"{name} must be a number, not {raw!r}") from None
            if value <= 0:
                raise RuntimeError(f"{name} must be positive")
            return value

        return cls(
            signing_keys=keys,
            workers_per_version=number("RUNTIME_WORKERS_PER_VERSION", 2),
            call_timeout=number("RUNTIME_CALL_TIMEOUT", 10, float),
            queue_timeout=number("RUNTIME_QUEUE_TIMEOUT", 10, float),
            worker_memory_mb=number("RUNTIME_WORKER_MEMORY_MB", 512),
            worker_cpu_seconds=number("RUNTIME_WORKER_CPU_SECONDS", 300),
            max_versions=number("RUNTIME_MAX_VERSIONS", 64),
            max_envelope_bytes=int(number("RUNTIME_MAX_ENVELOPE_MB", 12, float) * MEBIBYTE),
            signature_tolerance=number("RUNTIME_SIGNATURE_TOLERANCE", signing.DEFAULT_TOLERANCE),
        )


@dataclass
class Reply:
    status: int
    body: bytes
    headers: list[tuple[str, str]]
    outcome: str

    @classmethod
    def json(cls, status: int, data: dict, outcome: str | None = None) -> "Reply":
        body = json.dumps(data).encode()
        return cls(status, body, [("Content-Type", "application/json")], outcome or data["error"])


class RuntimeHost:
    """The WSGI application."""

    def __init__(self, config: HostConfig):
        self.config = config
        self.pools = PoolRegistry(
            WorkerSettings(
                sdk_path=prepare_sdk_path(),
                workers_per_version=config.workers_per_version,
                call_timeout=config.call_timeout,
                queue_timeout=config.queue_timeout,
                memory_bytes=config.worker_memory_mb * MEBIBYTE,
                cpu_seconds=config.worker_cpu_seconds,
            ),
            config.max_versions,
        )

    def __call__(self, environ, start_response):
        started = time.monotonic()
        described = {"event": "-", "integration": "-", "version": "-"}
        try:
            reply = self.route(environ, described)
        except Exception:
            logger.exception("runtime host: unexpected error")
            reply = Reply.json(500, {"error": "runtime_error"})
        if described["integration"] != "-":
            logger.info(
                "event=%s integration=%s version=%s status=%s outcome=%s duration_ms=%.1f",
                described["event"],
                described["integration"],
                described["version"],
                reply.status,
                reply.outcome,
                (time.monotonic() - started) * 1000,
            )
        headers = [
            *reply.headers,
            ("Content-Length", str(len(reply.body))),
            (OUTCOME_HEADER, reply.outcome),
        ]
        start_response(f"{reply.status} {_phrase(reply.status)}", headers)
        return [reply.body]

    def route(self, environ, described: dict) -> Reply:
        path, method = environ.get("PATH_INFO", ""), environ["REQUEST_METHOD"]
        if path == "/health" and method in ("GET", "HEAD"):
            return Reply.json(200, {"status": "ok"}, outcome="ok")
        match = ENVELOPE_PATH.match(path)
        if match is None:
            return Reply.json(404, {"error": "not_found"})
        if match["version"] not in SUPPORTED_VERSIONS:
            return Reply.json(
                404, {"error": "unsupported_version", "supported": SUPPORTED_VERSIONS}
            )
        if method != "POST":
            reply = Reply.json(405, {"error": "method_not_allowed"})
            reply.headers.append(("Allow", "POST"))
            return reply
        described["integration"] = match["name"]
        try:
            return self.run(match["name"], environ, described)
        except envelope.EnvelopeError as error:
            return Reply.json(error.status, error.body)

    def run(self, name: str, environ, described: dict) -> Reply:
        body = envelope.read_body(environ, self.config.max_envelope_bytes)
        envelope.authenticate(
            body,
            environ.get("HTTP_X_SERVICE_SIGNATURE"),
            self.config.signing_keys,
            self.config.signature_tolerance,
        )
        received = envelope.parse(body, environ.get("CONTENT_TYPE", ""), name)
        described["event"] = received.event["type"]
        described["version"] = received.environment["integration"].get("version", "-")
        key = (name, received.content_hash)
        pool = self.pools.get(key)
        if pool is None:
            if received.script is None:
                return Reply.json(
                    409, {"error": "script_required", "contentHash": received.content_hash}
                )
            pool = self.pools.create(key, received.script)
        fetch_body = received.fetch_body
        message = {
            "call": {
                "event": received.event,
                "environment": received.environment,
                "fetchBody": base64.b64encode(fetch_body).decode()
                if fetch_body is not None
                else None,
            }
        }
        try:
            answer = pool.call(message)
        except ScriptLoadError as error:
            return Reply.json(500, {"error": "integration_error", "message": str(error)})
        except WorkerTimeout:
            return Reply.json(504, {"error": "timeout"})
        except WorkerCrashed:
            return Reply.json(502, {"error": "worker_crashed"})
        except PoolBusy:
            return Reply.json(503, {"error": "busy"})
        return _reply_from(answer)

    def close(self):
        self.pools.close()
        shutil.rmtree(self.pools.settings.sdk_path, ignore_errors=True)


def _reply_from(answer: dict) -> Reply:
    """The worker's answer as this host's HTTP reply; a malformed answer is a crash."""
    try:
        status = answer["status"]
        headers = [(str(name), str(value)) for name, value in answer["headers"]]
        body = base64.b64decode(answer["body"], validate=True)
        if not (isinstance(status, int) and 100 <= status <= 599):
            raise ValueError(status)
        if any(not name or "\r" in name + value or "\n" in name + value for name, value in headers):
            raise ValueError("a header with a line break")
    except (KeyError, TypeError, ValueError):
        return Reply.json(502, {"error": "worker_crashed"})
    headers = [(name, value) for name, value in headers if name.lower() not in UNFORWARDED_HEADERS]
    return Reply(status, body, headers, str(answer.get("outcome") or "ok"))


def _phrase(status: int) -> str:
    try:
        return HTTPStatus(status).phrase
    except ValueError:
        return "Unknown"


def create_app() -> RuntimeHost:
    """The application, configured from the environment (gunicorn's entry point)."""
    if not logging.getLogger().handlers and not logger.handlers:
        handler = logging.StreamHandler()
        handler.setFormatter(logging.Formatter("runtime %(message)s"))
        logger.addHandler(handler)
        logger.setLevel(logging.INFO)
    app = RuntimeHost(HostConfig.from_environ())
    atexit.register(app.close)
    return app


class ThreadingWSGIServer(socketserver.ThreadingMixIn, WSGIServer):
    daemon_threads = True
    request_queue_size = 128  # the default backlog of 5 resets connections under load


class QuietRequestHandler(WSGIRequestHandler):
    """The host logs one line per call itself."""

    def log_message(self, format, *args):
        pass


def main(argv=None):
    parser = argparse.ArgumentParser(description="Serve the integration runtime host.")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8100)
    options = parser.parse_args(argv)
    app = create_app()
    server = make_server(
        options.host,
        options.port,
        app,
        server_class=ThreadingWSGIServer,
        handler_class=QuietRequestHandler,
    )

    def stop(signum, frame):
        raise SystemExit(0)

    signal.signal(signal.SIGTERM, stop)
    logger.info("listening on http://%s:%s", options.host, server.server_port)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()
        app.close()


if __name__ == "__main__":
    main()
