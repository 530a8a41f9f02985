"""The host's end of one sandboxed worker process (the pool, ``pool.py``, keeps several).

A worker is a fresh interpreter (``python -I -S``) started in the host's sandbox
(``sandbox.py``) with the bundle read-only at ``/bundle``. It loads the integration's code
once and serves one call at a time; during a call it may ask the host to perform HTTP
requests (``egress.py``). What a worker prints (its stdout and stderr are one pipe, read apart
from the protocol's) is kept with the call it was printed in, its first ``OUTPUT_LIMIT`` bytes.
"""

import codecs
import contextlib
import json
import logging
import os
import queue
import select
import signal
import subprocess
import threading
import time
from collections.abc import Callable
from concurrent.futures import Future
from dataclasses import dataclass

from .sandbox import Sandbox

logger = logging.getLogger("integrations.runtime")

STARTUP_SECONDS = 10
# A bundle that failed to load is not started again for this long (its import may have
# depended on something passing).
LOAD_ERROR_MEMORY = 30
ANSWER_LIMIT = 64 * 1024 * 1024
#: What a call's log keeps of what the code printed (stdout and stderr), and of its error.
OUTPUT_LIMIT = 4096
ERROR_LIMIT = 8192
READ_CHUNK = 256 * 1024
MEBIBYTE = 1024 * 1024


@dataclass(frozen=True)
class WorkerSettings:
    sandbox: Sandbox
    workers_per_version: int = 2
    call_timeout: float = 10
    queue_timeout: float = 10
    memory_bytes: int = 512 * MEBIBYTE
    cpu_seconds: int = 300
    processes: int = 32
    open_files: int = 256
    file_bytes: int = 64 * MEBIBYTE
    pool_idle_seconds: float = 300

    def limits(self) -> dict:
        return {
            "memory_bytes": self.memory_bytes,
            "cpu_seconds": self.cpu_seconds,
            "processes": self.processes,
            "open_files": self.open_files,
            "file_bytes": self.file_bytes,
        }


class CallFailed(Exception):
    """A call that gave no answer; ``output`` is what the code printed until then, ``error``
    its traceback when it has one."""

    output: str = ""
    error: str = ""


class WorkerCrashed(CallFailed):
    """The worker died or garbled its answer."""


class WorkerTimeout(CallFailed):
    """The worker did not answer within the time limit."""


class ScriptLoadError(CallFailed):
    """The code failed to load; the message is its exception, without the stack (which is
    ``error``)."""

    def __init__(self, message: str, *, error: str = "", output: str = ""):
        super().__init__(message)
        self.error, self.output = error, output

    def again(self) -> "ScriptLoadError":
        """The same failure, raised anew for another call."""
        return ScriptLoadError(str(self), error=self.error, output=self.output)


class OutputCapture:
    """What a worker printed during one call: the first ``limit`` bytes, and how many more."""

    def __init__(self, limit: int = OUTPUT_LIMIT):
        self.limit = limit
        self.kept = bytearray()
        self.cut = 0

    def add(self, data: bytes):
        room = max(0, self.limit - len(self.kept))
        self.kept += data[:room]
        self.cut += len(data) - min(room, len(data))

    def text(self) -> str:
        """The output as text (invalid UTF-8 replaced), with a mark where it was cut."""
        decoder = codecs.getincrementaldecoder("utf-8")("replace")
        text = decoder.decode(bytes(self.kept), final=not self.cut)
        if self.cut:
            text += f"\n[output cut: {self.cut} more bytes]"
        return text


class PoolBusy(Exception):
    """No worker of the version became free in time."""


#: Performs one HTTP request a worker asked for: (request, seconds left) -> the answer.
Egress = Callable[[dict, float], dict]


class _Spawner:
    """Starts every worker process from one thread that lives as long as the host: the
    sandbox ends its worker when the worker's parent *thread* exits (``--die-with-parent``,
    the kernel's parent-death signal), so no short-lived request thread may be that parent."""

    def __init__(self):
        self._requests: queue.SimpleQueue = queue.SimpleQueue()
        threading.Thread(target=self._run, name="worker-spawner", daemon=True).start()

    def _run(self):
        while True:
            arguments, done = self._requests.get()
            try:
                done.set_result(subprocess.Popen(**arguments))
            except BaseException as error:  # handed to the caller
                done.set_exception(error)

    def popen(self, **arguments) -> subprocess.Popen:
        done: Future = Future()
        self._requests.put((arguments, done))
        return done.result()


_spawner = _Spawner()


class Worker:
    """One sandboxed worker process and the host's end of its pipes."""

    def __init__(self, settings: WorkerSettings, name: str, folder: str, script: str):
        sandbox = settings.sandbox
        worker_settings = sandbox.worker_settings(settings.limits(), folder)
        self.process = _spawner.popen(
            args=sandbox.command(worker_settings, folder),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            # What the code prints (its stdout and stderr, its subprocesses' too) comes here,
            # never on the protocol's pipes, and is returned with the call it belongs to.
            stderr=subprocess.PIPE,
            cwd=sandbox.stage,
            env=sandbox.environment(folder),
            start_new_session=True,
        )
        self.pid = self.process.pid
        self._input = self.process.stdin.fileno()
        self._output = self.process.stdout.fileno()
        self._printed: int | None = self.process.stderr.fileno()
        os.set_blocking(self._input, False)
        os.set_blocking(self._printed, False)
        self._pending = bytearray()
        self._capture = OutputCapture()
        self._keep_printed = False
        try:
            loaded = self.exchange(
                {"load": {"name": name, "folder": worker_settings["folder"], "script": script}},
                settings.call_timeout + STARTUP_SECONDS,
            )
        except BaseException:
            self.kill()
            raise
        if not loaded.get("loaded"):
            self.kill()
            raise ScriptLoadError(
                loaded.get("message") or "the code did not load",
                error=_error_text(loaded.get("error")),
                output=loaded.get("output", ""),
            )
        # What the code printed while loading goes with the first call this worker serves.
        self._keep_printed = True

    def exchange(self, message: dict, timeout: float, egress: Egress | None = None) -> dict:
        """Send one message and wait for the answer, at most ``timeout`` seconds in all,
        performing the HTTP requests the worker asks for meanwhile. The answer's ``output``
        is what the worker printed meanwhile (a failure carries it too)."""
        deadline = time.monotonic() + timeout
        self._drain_printed()
        if not self._keep_printed:  # what it printed between calls belongs to none
            self._capture = OutputCapture()
        self._keep_printed = False
        try:
            self._send(json.dumps(message).encode() + b"\n", deadline)
            while True:
                answer = self._receive(deadline)
                if "fetch" not in answer:
                    break
                request = answer["fetch"]
                if egress is None or not isinstance(request, dict):
                    fetched = {"error": "no outbound requests here"}
                else:
                    fetched = egress(request, deadline - time.monotonic())
                self._send(json.dumps({"fetched": fetched}).encode() + b"\n", deadline)
        except CallFailed as failure:
            self._drain_printed(until_closed=isinstance(failure, WorkerCrashed))
            failure.output = self._capture.text()
            raise
        self._drain_printed()
        answer["output"] = self._capture.text()
        return answer

    def _drain_printed(self, until_closed: bool = False):
        """Read what the worker printed and is waiting in the pipe (all of it, up to its
        end, when the worker is gone)."""
        deadline = time.monotonic() + 1
        while self._printed is not None:
            try:
                chunk = os.read(self._printed, READ_CHUNK)
            except BlockingIOError:
                if not until_closed or time.monotonic() > deadline:
                    return
                select.select([self._printed], [], [], max(0, deadline - time.monotonic()))
                continue
            if not chunk:
                self._printed = None
                return
            self._capture.add(chunk)

    def _wait(self, deadline: float, reading: bool):
        """Until the protocol pipe is ready, reading what the worker prints meanwhile (so a
        worker printing much never blocks on a full pipe)."""
        fd = self._output if reading else self._input
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise WorkerTimeout
            readers = [fd] if reading else []
            if self._printed is not None:
                readers.append(self._printed)
            ready, writable, _ = select.select(readers, [] if reading else [fd], [], remaining)
            if self._printed is not None and self._printed in ready:
                self._drain_printed()
            if fd in ready or fd in writable:
                return
            if not ready and not writable:
                raise WorkerTimeout

    def _send(self, data: bytes, deadline: float):
        view = memoryview(data)
        while view:
            self._wait(deadline, reading=False)
            try:
                view = view[os.write(self._input, view) :]
            except BlockingIOError:
                continue
            except OSError as error:
                raise WorkerCrashed("the worker closed its input") from error

    def _receive(self, deadline: float) -> dict:
        while b"\n" not in self._pending:
            self._wait(deadline, reading=True)
            chunk = os.read(self._output, READ_CHUNK)
            if not chunk:
                raise WorkerCrashed(f"the worker exited ({self.process.poll()})")
            self._pending += chunk
            if len(self._pending) > ANSWER_LIMIT:
                raise WorkerCrashed("the worker's answer is over the size limit")
        line, _, rest = bytes(self._pending).partition(b"\n")
        self._pending = bytearray(rest)
        try:
            answer = json.loads(line)
        except ValueError as error:
            raise WorkerCrashed("the worker's answer is not JSON") from error
        if not isinstance(answer, dict):
            raise WorkerCrashed("the worker's answer is not an object")
        return answer

    def kill(self):
        """Kill the worker's sandbox, and with it everything the worker started."""
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.pid, signal.SIGKILL)
        self.process.wait()
        self.process.stdin.close()
        self.process.stdout.close()
        self.process.stderr.close()


def _error_text(error) -> str:
    """A worker's error report (its traceback) as the host passes it on: text, bounded."""
    return error[:ERROR_LIMIT] if isinstance(error, str) else ""
