"""The host's end of one sandboxed worker process (the pool, ``pool.py``, keeps several).

A worker is a fresh interpreter (``python -I -S``) started in the host's sandbox
(``sandbox.py``) with the bundle read-only at ``/bundle``. It loads the integration's code
once and serves one call at a time; during a call it may ask the host to perform HTTP
requests (``egress.py``). What a worker prints (its stdout and stderr are one pipe, read apart
from the protocol's) is kept with the call it was printed in: its first and last
``OUTPUT_LIMIT / 2`` bytes.
"""

import contextlib
import logging
import os
import signal
import subprocess
import threading
import time

from docplatform_sdk.framing import encode

from .call_failures import (
    ERROR_LIMIT,
    CallFailed,
    OutputCapture,
    ScriptLoadError,
    WorkerCrashed,
    WorkerLost,
)
from .egress import refusal_of
from .process_accounts import (
    ProcFiles,
    Usage,
    exhausted,
    idle_watch,
    innermost,
    memory_of,
    namespace_init,
    usage_of,
)
from .worker_pipes import HAND_OFF, HandOff, WorkerPipes
from .worker_start import Egress, WorkerSettings, spawner

logger = logging.getLogger("integrations.runtime")

STARTUP_SECONDS = 10
# A bundle that failed to load is not started again for this long (its import may have
# depended on something passing).
LOAD_ERROR_MEMORY = 30
SETTLE_SECONDS = 0.05


class Worker(WorkerPipes):
    """One sandboxed worker process: its code loaded, its calls, the host's accounts of it
    (its pipes: ``WorkerPipes``)."""

    def __init__(self, settings: WorkerSettings, name: str, folder: str, script: str):
        """Start a worker and load the code in it (``spawn``, then ``load``)."""
        self._start(settings, folder)
        self.load(name, script)

    @classmethod
    def spawn(cls, settings: WorkerSettings, folder: str) -> "Worker":
        """Start a sandboxed interpreter with ``folder`` (possibly still empty) read-only at
        ``/bundle``; it imports the SDK and waits for ``load``."""
        worker = cls.__new__(cls)
        worker._start(settings, folder)
        return worker

    def _start(self, settings: WorkerSettings, folder: str):
        sandbox = settings.sandbox
        self.settings = settings
        self._worker_settings = sandbox.worker_settings(settings.limits(), folder)
        with sandbox.filter_fd() as filter_fd:
            self.process = spawner.popen(
                args=sandbox.command(self._worker_settings, folder, filter_fd),
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                # What the code prints (its stdout and stderr, its subprocesses' too) comes
                # here, never on the protocol's pipes, and goes with the call it belongs to.
                stderr=subprocess.PIPE,
                cwd=sandbox.stage,
                env=sandbox.environment(folder),
                start_new_session=True,
                pass_fds=() if filter_fd is None else (filter_fd,),
            )
        self.pid = self.process.pid
        self._open_pipes()
        self._keep_printed = False
        self._baseline: Usage | None = None  # once loaded: its processes and threads
        self._state = threading.Lock()
        self._busy = False
        self._stopped: str | None = None  # why the host stopped it between calls
        self.calls = 0
        self._interpreter: int | None = None  # the sandbox's interpreter, once loaded
        #: The root of what is accounted for after each call, once loaded: the first process
        #: of the sandbox's own process namespace (``process_accounts.namespace_init``).
        self.accounted = self.pid
        self._proc_files = ProcFiles()  # its processes' /proc files, kept open

    def load(self, name: str, script: str):
        """Load the integration's code (the bundle's files are in the folder by now); the
        worker is killed when it fails (ScriptLoadError, WorkerCrashed, WorkerTimeout)."""
        folder = self._worker_settings["folder"]
        try:
            loaded = self.exchange(
                {"load": {"name": name, "folder": folder, "script": script}},
                self.settings.call_timeout + STARTUP_SECONDS,
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
        self._interpreter = innermost(self.pid)
        self.accounted = namespace_init(self.pid) if self._confined() else self.pid
        self._baseline = usage_of(self.accounted, self._proc_files)
        idle_watch.watch(self)
        # What the code printed while loading goes with the first call this worker serves.
        self._keep_printed = True

    def exchange(self, message: dict, timeout: float, egress: Egress | None = None) -> dict:
        """Send one message and wait for the answer, at most ``timeout`` seconds in all,
        performing the HTTP requests the worker asks for meanwhile. The answer's ``output``
        is what the worker printed meanwhile (a failure carries it too); a call's answer's
        ``retire`` is True when the worker asks to be replaced (a MemoryError): the host's
        own verdict is ``retire_reason``, asked by the pool."""
        deadline = time.monotonic() + timeout
        return self.finish(deadline, egress, pending=self._begun(message))

    def start(self, message: dict) -> list[memoryview]:
        """An event loop's ``exchange``, which never waits: the call begun and its message
        written as far as the pipe takes it now; what is left of it (nothing, as a rule: the
        pipe is empty between calls). Then ``take_answer`` as the answer comes, and
        ``finish`` (its ``pending``: what is left here). WorkerLost when the worker is not
        usable (the call is not begun)."""
        views = self._begun(message)
        try:
            return self._write_some(views)
        except OSError:  # ``finish`` says why, as ``exchange`` would
            return views

    def finish(
        self,
        deadline: float,
        egress: Egress | None,
        *,
        pending: list | None = None,
        answer: dict | None = None,
    ) -> dict:
        """The rest of a begun call, waiting as it must: ``pending`` still to write, then the
        answer read (or ``answer``, read already), the worker's HTTP requests performed."""
        try:
            return self._carry(deadline, egress, pending, answer)
        finally:
            self._end()

    def _begun(self, message: dict) -> list:
        """The call begun (the worker busy, a new call id) and its message encoded; what the
        worker printed before it taken in (it belongs to no call, unless the code printed it
        while loading). WorkerLost, the call not begun, when the worker is not usable."""
        with self._state:
            if self._stopped or self._wrote_out_of_turn():  # the call is not sent
                raise WorkerLost(f"the worker is not usable: {self._stopped or 'it wrote'}")
            self._busy, self._call_id, self.calls = True, self._call_id + 1, self.calls + 1
        try:
            self._inbox.clear()
            self._drain_printed()
            if not self._keep_printed:
                self._capture = OutputCapture()
            self._keep_printed = False
            return encode(self._call_id, message)
        except BaseException:
            self._end()
            raise

    def _end(self):
        with self._state:
            self._busy = False

    def _carry(
        self, deadline: float, egress: Egress | None, pending: list | None, answer: dict | None
    ) -> dict:
        first = answer is None
        try:
            if pending:
                self._send(pending, deadline)
            while True:
                if answer is None:
                    answer = self._receive(deadline, first=first)
                first = False
                if "fetch" not in answer:
                    break
                request = answer["fetch"]
                if egress is None or not isinstance(request, dict):
                    fetched = {"error": "no outbound requests here"}
                else:
                    fetched = egress(request, deadline - time.monotonic())
                    if refusal := refusal_of(fetched):
                        self._capture.add(f"[fetch refused: {refusal}]\n".encode())
                self._send(encode(self._call_id, {"fetched": fetched}), deadline)
                answer = None
        except CallFailed as failure:
            self._drain_printed(until_closed=isinstance(failure, WorkerCrashed))
            failure.output = self._capture.text()
            raise
        self._drain_printed()
        answer["output"] = self._capture.text()
        return answer

    # --- the host's accounts of the worker (process_accounts.py) ---------------------------

    def retire_reason(self, *, wait: bool = True) -> str | HandOff | None:
        """Why this worker must not serve another call (read by the host, never asked of the
        worker), or None: its last call left work behind, it used half its CPU budget, it
        has all but run out of open files, address space or ``/tmp``, or the host stopped
        it. Without ``wait`` (an event loop's), HAND_OFF when the answer needs a wait (a
        thread of the call that may still be exiting: ``left_work_behind``)."""
        if self._stopped:
            return self._stopped
        usage = usage_of(self.accounted, self._proc_files)
        if usage is None:
            return "it is gone"
        if usage.cpu_seconds > self.settings.cpu_seconds / 2:
            return f"it used {usage.cpu_seconds:.0f} s of CPU, half its budget"
        behind = self.left_work_behind(usage, wait=wait)
        if behind is None:
            return HAND_OFF
        if behind:
            return "its call left work behind"
        return exhausted(
            self._interpreter or self.pid,
            usage,
            self.settings.limits(),
            self._private_tmp(),
            self.settings.sandbox.tmp_bytes,
        )

    def memory(self) -> int:
        """What the worker holds of the host's memory (``process_accounts.memory_of``)."""
        return memory_of(self.pid, self._private_tmp())

    def _confined(self) -> bool:
        return self.settings.sandbox.mode != "off"

    def _private_tmp(self) -> str | None:
        """Where the host sees the worker's ``/tmp`` (None: unconfined, it has none)."""
        if self._interpreter is None or not self._confined():
            return None
        return f"/proc/{self._interpreter}/root/tmp"

    def left_work_behind(self, usage: Usage | None = None, *, wait: bool = True) -> bool | None:
        """Whether the sandbox holds processes or threads beyond those it had once loaded, or
        the worker wrote on the protocol pipe out of turn; None, without ``wait``, when it
        holds more and a moment's wait would tell whether they are on their way out."""
        if self._wrote_out_of_turn():
            return True
        usage = usage or usage_of(self.accounted, self._proc_files)
        if usage is None or self._baseline is None:
            return usage is None
        if usage.exceeds(self._baseline):
            if not wait:
                return None
            time.sleep(SETTLE_SECONDS)  # a thread joined a moment ago may still be exiting
            usage = usage_of(self.accounted, self._proc_files)
        return usage is None or usage.exceeds(self._baseline)

    def cpu_seconds(self) -> float:
        """The CPU time the worker's sandbox has used, all its processes and threads."""
        usage = usage_of(self.accounted, self._proc_files)
        return usage.cpu_seconds if usage else 0.0

    def usable(self) -> bool:
        """Whether the worker may take a call: alive, not stopped by the host, and nothing
        written on its protocol pipe since its last answer."""
        return not self._stopped and self.process.poll() is None and not self._wrote_out_of_turn()

    def idle(self) -> bool:
        return self._baseline is not None and not self._busy and not self._stopped

    def stop_idle(self, reason: str):
        """Kill the worker between calls (``IdleWatch``); its next call is refused as
        WorkerLost, to be tried again elsewhere."""
        with self._state:
            if self._busy or self._stopped:
                return
            self._stopped = reason
        logger.warning("worker %s stopped: %s", self.pid, reason)
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.pid, signal.SIGKILL)

    def kill(self):
        """Kill the worker's sandbox, and with it everything the worker started."""
        idle_watch.forget(self)
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.pid, signal.SIGKILL)
        self.process.wait()
        self.process.stdin.close()
        self.process.stdout.close()
        self.process.stderr.close()
        self._proc_files.close()


def _error_text(error) -> str:
    """A worker's error report (its traceback) as the host passes it on: text, bounded."""
    return error[:ERROR_LIMIT] if isinstance(error, str) else ""
