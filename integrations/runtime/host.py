"""The runtime host: the envelope protocol (DESIGN.md), served over HTTP (a WSGI application)
and in frames on persistent connections (``frames.py``, ``socket_server.py``).

``POST /integrations/{name}/v1`` takes a signed envelope and answers with what the integration
answered; ``POST /inspect`` takes a signed bundle and describes its code loaded once in the
sandbox (``inspection.py``, for publish's checks); ``GET /health`` says the host is up and
how it confines integration code. Integration code runs in sandboxed worker processes
(``pool.py``, ``sandbox.py``), never here, and reaches the network only through this host
(``egress.py``). Production: ``gunicorn --worker-class gthread --threads 48
'integrations.runtime.host:create_app()'``; development and tests: ``python -m
integrations.runtime.host --port 8100``; with frames (the platform's ``RUNTIME_URL``
``unix:///path`` or ``tcp://host:port``): ``python -m integrations.runtime.host --socket
/path [--frames-port N]``, HTTP still served on ``--port`` beside them. Either transport
reaches the same ``serve``.

Its settings, from the environment: ``config.py``; the protocol's names (paths, parts,
headers, outcomes), shared with the platform's gateway: ``protocol.py``; its answers:
``replies.py``; the development server and the process's hardening: ``serving.py``.
"""

import argparse
import atexit
import logging
import os
import signal
import sys
import threading
import time
from collections.abc import Callable
from wsgiref.simple_server import make_server

from docplatform_sdk import codebundle

from . import after_reply, envelope, protocol, tracing
from .call_failures import (
    AnswerTooLarge,
    PoolBusy,
    ScriptLoadError,
    WorkerCrashed,
    WorkerLost,
    WorkerTimeout,
)
from .calls import Call, described_call, log_call
from .config import MEBIBYTE, HostConfig
from .egress import Egress, EgressSettings
from .inspection import inspect_bundle
from .pool import RETRY_AFTER_SECONDS, installation_of
from .registry import PoolRegistry
from .replies import Reply, phrase, reply_from
from .sandbox import SandboxUnavailable, make_sandbox
from .serving import (
    QuietRequestHandler,
    ThreadingWSGIServer,
    forbid_inspection,
    log_to_stderr,
    open_files_raised,
)
from .socket_server import CannotListen, serve_frames
from .worker_start import WorkerSettings

logger = logging.getLogger("integrations.runtime")

#: How long a code check waits for one of the ``RUNTIME_INSPECT_CONCURRENCY`` slots.
INSPECT_WAIT_SECONDS = 2.0


class RuntimeHost:
    """The WSGI application."""

    def __init__(self, config: HostConfig):
        self.config = config
        self.sandbox = make_sandbox(
            config.sandbox, config.worker_user, config.worker_tmp_mb * MEBIBYTE
        )
        if self.sandbox.mode == "off":
            logger.warning(UNCONFINED_WARNING)
        else:
            logger.info(
                "integration code runs sandboxed (%s), %s; worker limits: %s",
                self.sandbox.mode,
                "with a seccomp filter" if self.sandbox.seccomp else "with NO seccomp filter",
                WORKER_LIMITS,
            )
        self.pools = PoolRegistry(
            WorkerSettings(
                sandbox=self.sandbox,
                call_timeout=config.call_timeout,
                memory_bytes=config.worker_memory_mb * MEBIBYTE,
                cpu_seconds=config.worker_cpu_seconds,
                processes=config.worker_processes,
                open_files=config.worker_open_files,
                file_bytes=config.worker_file_mb * MEBIBYTE,
                answer_bytes=int(config.max_answer_mb * MEBIBYTE),
            ),
            config.pools,
        )
        self.inspections = threading.BoundedSemaphore(config.inspect_concurrency)
        self.egress = Egress(
            EgressSettings(
                allowed_networks=list(config.allowed_networks),
                max_response_bytes=int(config.fetch_max_mb * MEBIBYTE),
                total_timeout=config.fetch_timeout,
            )
        )

    def health(self) -> dict:
        answer = {"status": "ok", "sandbox": self.sandbox.mode, "pools": len(self.pools)}
        # Each pool's workers (alive or starting) and the spares: the platform's /metrics
        # reads them here (docplatform_runtime_workers).
        answer["workers"] = self.pools.workers()
        answer["seccomp"] = self.sandbox.seccomp is not None
        answer["limits"] = WORKER_LIMITS
        if self.sandbox.mode == "off":
            answer["warning"] = UNCONFINED_WARNING
        return answer

    def __call__(self, environ, start_response):
        """The WSGI application: HTTP's side of ``serve``."""
        carrier = {
            name: environ[key]
            for name, key in (
                ("traceparent", "HTTP_TRACEPARENT"),
                ("tracestate", "HTTP_TRACESTATE"),
            )
            if key in environ
        }
        method, path = environ["REQUEST_METHOD"], environ.get("PATH_INFO", "")
        with after_reply.held() as later:
            reply = self.serve(method, path, envelope.HttpRequest(environ, self.config), carrier)
        try:
            headers = [
                *reply.headers,
                ("Content-Length", str(len(reply.body))),
                (protocol.OUTCOME_HEADER, reply.outcome),
                *reply.log_headers(),
            ]
            start_response(f"{reply.status} {phrase(reply.status)}", headers)
        except BaseException:  # no body to close: the work is done now, never forgotten
            after_reply.run(later)
            raise
        return AnswerThen(reply.body, later)

    def serve(self, method: str, path: str, received, carrier: dict) -> Reply:
        """One request, whichever transport brought it (HTTP, or a frame: ``socket_server``):
        ``received`` gives its authenticated body or envelope (``envelope.HttpRequest``,
        ``socket_server.FrameRequest``); ``carrier``: the caller's trace context."""
        started = time.monotonic()
        described = described_call()
        with tracing.server_span(method, path, carrier) as span:  # the gateway's trace
            try:
                routed = self.route(method, path, received, described)
                reply = routed if isinstance(routed, Reply) else self.call(routed)
            except Exception:
                logger.exception("runtime host: unexpected error")
                reply = Reply.json(500, {"error": protocol.RUNTIME_ERROR})
            if span is not None:
                span.set_attribute("http.response.status_code", reply.status)
                span.set_attribute("docplatform.runtime.outcome", reply.outcome)
        log_call(described, reply, started)
        return reply

    def route(self, method: str, path: str, received, described: dict) -> Reply | Call:
        """The reply to a request, or the call it asks for (``call`` runs it): on an event
        loop (``socket_server``) only for an envelope without its bundle (``quick``)."""
        if path == protocol.HEALTH_PATH and method in ("GET", "HEAD"):
            return Reply.json(200, self.health(), outcome=protocol.OK)
        if path == protocol.INSPECT_PATH:
            if method != "POST":
                reply = Reply.json(405, {"error": "method_not_allowed"})
                reply.headers.append(("Allow", "POST"))
                return reply
            return self.inspect(received)
        match = protocol.ENVELOPE_PATH.match(path)
        if match is None:
            return Reply.json(404, {"error": "not_found"})
        if match["version"] not in protocol.SUPPORTED_VERSIONS:
            return Reply.json(
                404, {"error": "unsupported_version", "supported": protocol.SUPPORTED_VERSIONS}
            )
        if method != "POST":
            reply = Reply.json(405, {"error": "method_not_allowed"})
            reply.headers.append(("Allow", "POST"))
            return reply
        described["integration"] = match["name"]
        try:
            return self.prepare(match["name"], received, described)
        except envelope.EnvelopeError as error:
            return Reply.json(error.status, error.body)

    @staticmethod
    def quick(path: str, has_bundle: bool) -> bool:
        """Whether ``route`` answers a request at once, without waiting (an envelope
        without its bundle: a health check and a code check wait, a bundle takes long to
        decode), and no trace is kept (a span is one thread's)."""
        return (
            not has_bundle
            and not tracing.is_on()
            and protocol.ENVELOPE_PATH.match(path) is not None
        )

    def inspect(self, received) -> Reply:
        """``POST /inspect``: a signed bundle (the body) loaded once in the sandbox, and
        described (``inspection``) for the platform's publish to check against the manifest."""
        try:
            body = received.body()
        except envelope.EnvelopeError as error:
            return Reply.json(error.status, error.body)
        try:
            bundle = codebundle.decode(body)
        except codebundle.BundleError as error:
            return Reply.json(400, {"error": "malformed_bundle", "message": str(error)})
        if not self.inspections.acquire(timeout=INSPECT_WAIT_SECONDS):
            reply = Reply.json(
                503,
                {
                    "error": protocol.BUSY,
                    "message": f"{self.config.inspect_concurrency} code checks are running; "
                    "try again in a moment",
                },
                outcome=protocol.BUSY,
            )
            reply.headers.append(("Retry-After", "1"))
            return reply
        try:
            description = inspect_bundle(self.pools.settings, bundle)
        finally:
            self.inspections.release()
        return Reply.json(200, {protocol.DESCRIPTION: description}, outcome=protocol.OK)

    def prepare(self, name: str, request, described: dict) -> Reply | Call:
        """The call an envelope asks for, its pool found or made; or why there is none."""
        received = request.envelope(name)
        described["event"] = received.event["type"]
        described["version"] = received.environment["integration"].get("version", "-")
        key = (name, received.bundle_hash)
        if received.bundle is not None:
            computed = codebundle.digest(received.bundle)
            if computed != received.bundle_hash:
                return Reply.json(
                    400,
                    {
                        "error": "bundle_mismatch",
                        "message": "the bundle's SHA-256 is not the signed bundleHash",
                        protocol.BUNDLE_HASH: received.bundle_hash,
                        "computed": computed,
                    },
                )
        # The pool: the version's workers for this installation alone (pool.py).
        installation = installation_of(received.environment)
        pool = self.pools.get(key, installation)
        if pool is None:
            if received.bundle is None:
                return Reply.json(
                    409,
                    {"error": protocol.BUNDLE_REQUIRED, protocol.BUNDLE_HASH: received.bundle_hash},
                )
            try:
                bundle = codebundle.decode(received.bundle)
            except codebundle.BundleError as error:
                return Reply.json(
                    400, {"error": "malformed_envelope", "part": "bundle", "message": str(error)}
                )
            pool = self.pools.create(key, installation, bundle)
        message = {
            "call": received.call(),  # the checked JSON as it came
            "body": received.fetch_body,  # carried raw (bytes), or None
        }
        return Call(pool, message, self.egress.for_call(name, received.environment))

    def call(self, call: Call, calling: Callable[[], dict] | None = None) -> Reply:
        """The reply to ``call``: its answer (``calling()``; by default the pool's ``call``,
        which waits for a worker and its answer), or its failure's."""
        try:
            answer = calling() if calling else call.pool.call(call.message, call.egress)
        except ScriptLoadError as error:
            reply = Reply.json(500, {"error": protocol.INTEGRATION_ERROR, "message": str(error)})
            return reply.logged(error, f"the code did not load: {error}")
        except WorkerTimeout as error:
            limit = f"{self.config.call_timeout:g}"
            return Reply.json(504, {"error": protocol.TIMEOUT}).logged(
                error, f"the call ran over its time limit ({limit} s) and was stopped"
            )
        except WorkerLost as error:  # killed from outside: the platform tries again
            return Reply.json(503, {"error": protocol.WORKER_LOST}).logged(error, str(error))
        except AnswerTooLarge as error:
            limit = {"error": protocol.ANSWER_TOO_LARGE, "limit": error.limit}
            return Reply.json(502, limit).logged(error, str(error))
        except WorkerCrashed as error:
            return Reply.json(502, {"error": protocol.WORKER_CRASHED}).logged(
                error, f"the worker crashed: {error}"
            )
        except PoolBusy:
            reply = Reply.json(503, {"error": protocol.BUSY})
            reply.headers.append(("Retry-After", str(RETRY_AFTER_SECONDS)))
            return reply
        return reply_from(answer)

    def close(self):
        self.pools.close()
        self.sandbox.close()


class AnswerThen(list):
    """A WSGI response body whose ``close`` (called by the server once the body is sent)
    runs the work the call left for after its answer (``after_reply``)."""

    def __init__(self, body: bytes, later: list):
        super().__init__([body])
        self.later = later

    def close(self):
        after_reply.run(self.later)


#: How each worker is limited: per-process rlimits set before its code loads, and the host's
#: own accounts of its process tree (process_accounts.py). Not cgroups: this host does not
#: create a cgroup v2 per worker yet (README, "Sandbox").
WORKER_LIMITS = "rlimits (memory, CPU time, processes, open files, file size)"

UNCONFINED_WARNING = (
    "RUNTIME_SANDBOX=off: integration code runs UNCONFINED, with this host's user, files and "
    "network. Development only: install bubblewrap (apt-get install bubblewrap) for the sandbox."
)


#: gunicorn's exit status for a worker that cannot boot (``Arbiter.WORKER_BOOT_ERROR``).
WORKER_BOOT_ERROR = 3


def create_app() -> RuntimeHost:
    """The application, configured from the environment (gunicorn's entry point)."""
    log_to_stderr()
    forbid_inspection()
    open_files_raised()  # before the default number of workers is read from it
    try:
        config = HostConfig.from_environ()
    except RuntimeError as error:  # a setting missing or malformed: its message names it
        print(f"runtime host: {error}", file=sys.stderr, flush=True)
        raise SystemExit(WORKER_BOOT_ERROR) from None
    tracing.tracing_start()
    for name in ("RUNTIME_SIGNING_KEY", "RUNTIME_SIGNING_KEY_FILE"):
        os.environ.pop(name, None)  # nothing this host starts inherits the key
    try:
        app = RuntimeHost(config)
    except SandboxUnavailable as error:
        print(f"runtime host: {error}", file=sys.stderr, flush=True)
        # gunicorn's "worker failed to boot": its arbiter stops instead of booting the worker
        # again forever (a host that loops never answers /health, and says so only in its log).
        raise SystemExit(WORKER_BOOT_ERROR) from None
    atexit.register(app.close)
    return app


def main(argv=None):
    parser = argparse.ArgumentParser(description="Serve the integration runtime host.")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8100)
    parser.add_argument("--socket", help="also serve frames on this Unix socket (unix://)")
    parser.add_argument("--frames-port", type=int, help="also serve frames on this TCP port")
    options = parser.parse_args(argv)
    app = create_app()
    try:
        server = make_server(
            options.host,
            options.port,
            app,
            server_class=ThreadingWSGIServer,
            handler_class=QuietRequestHandler,
        )
    except OSError as error:
        app.close()
        reason = f"{error.strerror or error}; give another --port"
        address = f"http://{options.host}:{options.port}"
        print(f"runtime host: cannot listen on {address}: {reason}", file=sys.stderr, flush=True)
        raise SystemExit(1) from None
    logger.info("listening on http://%s:%s", options.host, server.server_port)
    frames_tcp = None if options.frames_port is None else (options.host, options.frames_port)
    try:
        if options.socket or frames_tcp:
            # HTTP (the fallback, and /health for operators) beside the frames' event loop,
            # once the frames' sockets listen: a host that answers /health takes frames.
            http = threading.Thread(target=server.serve_forever, daemon=True)
            serve_frames(app, options.socket, frames_tcp, listening=http.start)
        else:
            signal.signal(signal.SIGTERM, _stop)
            server.serve_forever()
    except KeyboardInterrupt:
        pass
    except CannotListen as error:  # another host on the socket, a port taken, a path too long
        print(f"runtime host: {error}", file=sys.stderr, flush=True)
        raise SystemExit(1) from None
    finally:
        server.server_close()
        app.close()


def _stop(signum, frame):
    raise SystemExit(0)


if __name__ == "__main__":
    main()
