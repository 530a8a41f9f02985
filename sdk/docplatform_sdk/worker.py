"""The worker process: loads one integration's code and serves the host's calls, one at a time.

The runtime host starts it inside its sandbox (``integrations/runtime/sandbox.py``) as
``python -I -S -c BOOTSTRAP <settings JSON>``. Protocol: frames (``framing.py``: a header
with the sizes and the call's id, a JSON object, the body's bytes) on the worker's stdin and
stdout (integration code cannot print into it: its stdout goes to stderr, a pipe the host
reads apart and returns with each call). Every frame of a call carries the call's id.

- host -> worker, first: ``{"load": {"name", "folder", "script"}}`` (the bundle is unpacked
  read-only in ``folder``); worker -> host: ``{"loaded": true}`` or ``{"loaded": false,
  "message", "error"}``.
- then, per call: ``{"call": {"event", "environment"}, "body"}`` (the fetch body, or null).
  While it runs, the worker may send ``{"fetch": {"url", "method", "headers", "body"}}`` any
  number of times and reads ``{"fetched": {"status", "headers", "body"}}`` or ``{"fetched":
  {"error"}}`` back (those bodies in base64). Then worker -> host: ``{"status", "headers",
  "body", "outcome", "retire"}``, where ``outcome`` is ``ok`` or ``integration_error`` and
  ``retire`` asks the host to replace this worker after a MemoryError (the host measures the
  rest itself: what a call left running, the CPU time); a failed call's answer has ``error``
  too: the traceback, naming the author's files relative to the bundle.
  What the code printed is flushed before the answer is sent, so the host has all of it.
"""

import base64
import contextlib
import ctypes
import importlib.abc
import os
import resource
import signal
import sys
import threading
import time
import types

from .context import FetchError
from .definition import Integration
from .dispatch import Answer, Dispatcher
from .errors import error_body
from .framing import HEADER, decode, encode
from .http_messages import Response
from .tracebacks import author_traceback

PLATFORM_PACKAGES = {"docplatform", "webhooks", "marketplace", "integrations"}
PR_SET_DUMPABLE = 4
PR_SET_PDEATHSIG = 1
MESSAGE_LIMIT = 2000
ERROR_LIMIT = 8192


class PlatformImportBlocker(importlib.abc.MetaPathFinder):
    """Integration code cannot import the platform; the old SDK path says where it went."""

    def find_spec(self, fullname, path=None, target=None):
        top = fullname.partition(".")[0]
        if fullname == "integrations.runtime" or fullname.startswith("integrations.runtime."):
            raise ModuleNotFoundError(
                f"No module named {fullname!r}: the SDK is now docplatform_sdk "
                "(write `from docplatform_sdk import create_integration, ...`)",
                name=fullname,
            )
        if top in PLATFORM_PACKAGES:
            raise ModuleNotFoundError(
                f"No module named {fullname!r}: integration code cannot import the platform",
                name=fullname,
            )
        return None


class ScriptError(Exception):
    """The script does not define an integration."""


def limit_resources(settings: dict):
    """Address space, CPU time over the worker's life (SIGXCPU, then SIGKILL), open files,
    file size, no core files; and, inside a sandbox (its own user namespace, so the count is
    this worker's alone), processes."""
    limits = [
        (resource.RLIMIT_AS, settings["memory_bytes"]),
        (resource.RLIMIT_NOFILE, settings["open_files"]),
        (resource.RLIMIT_FSIZE, settings["file_bytes"]),
        (resource.RLIMIT_CORE, 0),
    ]
    if settings.get("processes"):
        limits.append((resource.RLIMIT_NPROC, settings["processes"]))
    for kind, value in limits:
        resource.setrlimit(kind, (value, value))
    cpu = settings["cpu_seconds"]
    resource.setrlimit(resource.RLIMIT_CPU, (cpu, cpu + 1))


def forbid_inspection():
    """Other processes of the same user may not read this one's memory or /proc files."""
    with contextlib.suppress(OSError, AttributeError):  # not Linux: nothing to switch off
        ctypes.CDLL(None, use_errno=True).prctl(PR_SET_DUMPABLE, 0, 0, 0, 0)


def exit_with_host(check_every: float = 1.0):
    """End this worker when its parent is gone, even in the middle of a hung call: by the
    kernel's parent-death signal where there is one (Linux), so the worker has no thread of
    its own (the host reads one thread's files after each call), else a thread that looks."""
    parent = os.getppid()
    with contextlib.suppress(OSError, AttributeError):  # not Linux: the thread below
        libc = ctypes.CDLL(None, use_errno=True)
        if libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0) == 0:
            if os.getppid() != parent:  # gone before the signal was armed
                os._exit(0)
            return

    def watch():
        while os.getppid() == parent:
            time.sleep(check_every)
        os._exit(0)

    threading.Thread(target=watch, daemon=True).start()


def take_protocol_pipes():
    """The pipes to the host, moved off fds 0 and 1 so that print() cannot garble them."""
    reader = os.fdopen(os.dup(0), "rb")
    writer = os.fdopen(os.dup(1), "wb")
    devnull = os.open(os.devnull, os.O_RDONLY)
    os.dup2(devnull, 0)
    os.close(devnull)
    os.dup2(2, 1)
    sys.stdout.reconfigure(line_buffering=True)
    return reader, writer


class HostChannel:
    """The worker's end of the protocol: answers, and fetches the host performs for it."""

    def __init__(self, reader, writer):
        self.reader, self.writer = reader, writer
        self.call_id = 0  # of the message being answered: every frame sent carries it
        self._lock = threading.Lock()

    def send(self, message: dict):
        for part in encode(self.call_id, message):
            self.writer.write(part)
        self.writer.flush()

    def receive(self) -> dict | None:
        header = self.reader.read(HEADER.size)
        if len(header) < HEADER.size:
            return None
        size, body_size, self.call_id = HEADER.unpack(header)
        return decode(self.reader.read(size), self.reader.read(body_size))

    def fetch(self, url, method="GET", headers=None, body=None, timeout=10) -> Response:
        if isinstance(body, str):
            body = body.encode()
        request = {
            "url": str(url),
            "method": str(method).upper(),
            "headers": {str(name): str(value) for name, value in (headers or {}).items()},
            "body": base64.b64encode(body).decode() if body else None,
            "timeout": float(timeout),
        }
        with self._lock:
            self.send({"fetch": request})
            answer = (self.receive() or {}).get("fetched") or {}
        if "error" in answer:
            raise FetchError(answer["error"])
        return Response(answer["status"], dict(answer["headers"]), base64.b64decode(answer["body"]))


def load(name: str, folder: str, script: str) -> Integration:
    """Run the entry script as a fresh module, the bundle's folder first on the import path;
    its ``integration`` is what we serve. Tracebacks name the author's files."""
    sys.path.insert(0, folder)
    path = os.path.join(folder, script)
    with open(path, encoding="utf-8") as handle:
        source = handle.read()
    module = types.ModuleType("__integration__")
    module.__file__ = path
    sys.modules[module.__name__] = module
    exec(compile(source, path, "exec"), module.__dict__)  # noqa: S102 - the point of a worker
    integration = module.__dict__.get("integration")
    if not isinstance(integration, Integration):
        raise ScriptError(f"{script} must bind integration = create_integration(...)")
    return integration


def describe(error: BaseException) -> str:
    """An exception as its type and message, never its stack."""
    return f"{type(error).__name__}: {error}"[:MESSAGE_LIMIT]


def flush_output():
    """What the code printed, out of Python's buffers and into the host's pipe."""
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(Exception):  # a stream the code closed or replaced
            stream.flush()


def serve(dispatcher: Dispatcher, folder: str, channel: HostChannel):
    while (message := channel.receive()) is not None:
        call = message["call"]
        outcome, retire, error_text = "ok", False, None
        try:
            answer = dispatcher.dispatch(call["event"], call["environment"], message["body"])
        except (Exception, SystemExit) as error:
            outcome, retire = "integration_error", isinstance(error, MemoryError)
            error_text = author_traceback(error, folder)[:ERROR_LIMIT]
            answer = Answer.json(500, error_body(error, describe(error)))
        flush_output()
        reply = {
            "status": answer.status,
            "headers": answer.headers,
            "body": answer.body,
            "outcome": outcome,
            "retire": retire,
        }
        if error_text:
            reply["error"] = error_text
        channel.send(reply)
        if retire:
            return


def main(settings: dict):
    reader, writer = take_protocol_pipes()
    channel = HostChannel(reader, writer)
    limit_resources(settings)
    forbid_inspection()
    exit_with_host()
    sys.meta_path.insert(0, PlatformImportBlocker())
    script = channel.receive()["load"]
    try:
        integration = load(script["name"], script["folder"], script["script"])
    except (Exception, SystemExit) as error:
        flush_output()
        error_text = author_traceback(error, script["folder"])[:ERROR_LIMIT]
        channel.send({"loaded": False, "message": describe(error), "error": error_text})
        return
    flush_output()
    channel.send({"loaded": True})
    serve(Dispatcher(integration, channel.fetch), script["folder"], channel)
