"""The worker process: loads one integration script and serves the host's calls, one at a time.

The host (``pool.py``) starts it as ``python -I -S -c BOOTSTRAP <settings JSON>`` with a
scrubbed environment. Protocol: one JSON object per line on the worker's stdin and stdout
(which integration code cannot print into: its stdout goes to stderr), bodies in base64.

- host -> worker, first: ``{"load": {"name", "source"}}``;
  worker -> host: ``{"loaded": true}`` or ``{"loaded": false, "message"}``.
- then, per call: ``{"call": {"event", "environment", "fetchBody"}}``;
  worker -> host: ``{"status", "headers", "body", "outcome", "cpuSeconds", "retire"}``, where
  ``outcome`` is ``ok`` or ``integration_error`` and ``retire`` asks the host to replace this
  worker (after a MemoryError its state is not to be trusted).
"""

import base64
import contextlib
import ctypes
import importlib.abc
import json
import linecache
import os
import resource
import sys
import threading
import time
import traceback
import types

from .definition import Integration
from .dispatch import Answer, Dispatcher

PLATFORM_PACKAGES = {"docplatform", "webhooks", "marketplace"}
PR_SET_DUMPABLE = 4
MESSAGE_LIMIT = 2000


class PlatformImportBlocker(importlib.abc.MetaPathFinder):
    """Integration code cannot import the platform, even from an installed copy of it."""

    def find_spec(self, fullname, path=None, target=None):
        if fullname.partition(".")[0] in PLATFORM_PACKAGES:
            raise ModuleNotFoundError(
                f"No module named {fullname!r}: integration code cannot import the platform",
                name=fullname,
            )
        return None


class ScriptError(Exception):
    """The script does not define an integration."""


def limit_resources(memory_bytes: int, cpu_seconds: int):
    """Address space, CPU time over the worker's life (SIGXCPU, then SIGKILL), no core files."""
    resource.setrlimit(resource.RLIMIT_AS, (memory_bytes, memory_bytes))
    resource.setrlimit(resource.RLIMIT_CPU, (cpu_seconds, cpu_seconds + 1))
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))


def forbid_inspection():
    """Processes of the same (non-root) user may no longer read this one's memory (ptrace)."""
    with contextlib.suppress(OSError, AttributeError):  # not Linux: nothing to switch off
        ctypes.CDLL(None, use_errno=True).prctl(PR_SET_DUMPABLE, 0, 0, 0, 0)


def exit_with_host(check_every: float = 1.0):
    """End this worker when the host is gone, even in the middle of a hung call."""
    host = os.getppid()

    def watch():
        while os.getppid() == host:
            time.sleep(check_every)
        os._exit(0)

    threading.Thread(target=watch, daemon=True).start()


def take_protocol_pipes():
    """The pipes to the host, moved off fds 0 and 1 so integration code cannot use them."""
    reader = os.fdopen(os.dup(0), "rb")
    writer = os.fdopen(os.dup(1), "wb")
    devnull = os.open(os.devnull, os.O_RDONLY)
    os.dup2(devnull, 0)
    os.close(devnull)
    os.dup2(2, 1)
    # What integration code prints reaches the host's log line by line (`integration dev`).
    sys.stdout.reconfigure(line_buffering=True)
    return reader, writer


def load(name: str, source: str) -> Integration:
    """Run the script as a fresh module; its ``integration`` is what we serve."""
    filename = f"<integration {name}>"
    linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
    module = types.ModuleType("integration_script")
    module.__file__ = filename
    sys.modules[module.__name__] = module
    exec(compile(source, filename, "exec"), module.__dict__)  # noqa: S102 - the point of a worker
    integration = module.__dict__.get("integration")
    if not isinstance(integration, Integration):
        raise ScriptError("the script must bind integration = create_integration(...)")
    return integration


def describe(error: BaseException) -> str:
    """An exception as its type and message, never its stack."""
    return f"{type(error).__name__}: {error}"[:MESSAGE_LIMIT]


def cpu_seconds() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def serve(dispatcher: Dispatcher, name: str, reader, send):
    for line in reader:
        call = json.loads(line)["call"]
        fetch_body = call.get("fetchBody")
        outcome, retire = "ok", False
        try:
            answer = dispatcher.dispatch(
                call["event"],
                call["environment"],
                base64.b64decode(fetch_body) if fetch_body is not None else None,
            )
        except (Exception, SystemExit) as error:
            outcome, retire = "integration_error", isinstance(error, MemoryError)
            print(f"integration {name}: {call['event'].get('type')} failed", file=sys.stderr)
            traceback.print_exc()
            answer = Answer.json(500, {"error": "integration_error", "message": describe(error)})
        send(
            {
                "status": answer.status,
                "headers": answer.headers,
                "body": base64.b64encode(answer.body).decode(),
                "outcome": outcome,
                "cpuSeconds": cpu_seconds(),
                "retire": retire,
            }
        )
        if retire:
            return


def main(settings: dict):
    reader, writer = take_protocol_pipes()

    def send(message: dict):
        writer.write(json.dumps(message).encode() + b"\n")
        writer.flush()

    limit_resources(settings["memory_bytes"], settings["cpu_seconds"])
    forbid_inspection()
    exit_with_host()
    sys.meta_path.insert(0, PlatformImportBlocker())
    script = json.loads(reader.readline())["load"]
    try:
        integration = load(script["name"], script["source"])
    except (Exception, SystemExit) as error:
        traceback.print_exc()
        send({"loaded": False, "message": describe(error)})
        return
    send({"loaded": True})
    serve(Dispatcher(integration), script["name"], reader, send)
