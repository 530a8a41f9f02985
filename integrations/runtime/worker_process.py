"""The host's end of one sandboxed worker process (the pool, ``pool.py``, keeps several).

A worker is a fresh interpreter (``python -I -S``) started in the host's sandbox
(``sandbox.py``) with the bundle read-only at ``/bundle``. It loads the integration's code
once and serves one call at a time; during a call it may ask the host to perform HTTP
requests (``egress.py``). What a worker prints (its stdout and stderr are one pipe, read apart
from the protocol's) is kept with the call it was printed in: its first and last
``OUTPUT_LIMIT / 2`` bytes.
"""

import contextlib
import fcntl
import logging
import math
import os
import select
import signal
import subprocess
import threading
import time

from docplatform_sdk.framing import HEADER, decode, encode

from .call_failures import (
    ERROR_LIMIT,
    AnswerTooLarge,
    CallFailed,
    OutputCapture,
    ScriptLoadError,
    StaleAnswer,
    WorkerCrashed,
    WorkerLost,
    WorkerTimeout,
)
from .egress import refusal_of
from .process_accounts import (
    ProcFiles,
    Usage,
    exhausted,
    idle_watch,
    innermost,
    memory_of,
    usage_of,
)
from .worker_start import Egress, WorkerSettings, spawner

logger = logging.getLogger("integrations.runtime")

STARTUP_SECONDS = 10
# A bundle that failed to load is not started again for this long (its import may have
# depended on something passing).
LOAD_ERROR_MEMORY = 30
READ_CHUNK = 1024 * 1024
PIPE_BYTES = 1024 * 1024
#: How long a crashed worker's exit status is waited for; how long a thread may take to end.
EXIT_WAIT_SECONDS = 1
#: Reads of the printed pipe at a time, but for a worker that is gone (64 KiB each at most).
DRAIN_READS = 16
SETTLE_SECONDS = 0.05
#: Exit statuses of a sandbox whose worker was killed by a signal (bubblewrap exits with 128
#: and the signal's number; a killed bubblewrap, minus the number) that the host does not
#: send for a limit: the OOM killer's, a shutdown's, someone's kill. Not the code's doing, as
#: far as the host can tell (its own ``os.kill(os.getpid(), 9)`` looks the same).
LOST_SIGNALS = (signal.SIGKILL, signal.SIGTERM, signal.SIGHUP, signal.SIGINT)
LOST_CODES = {128 + number for number in LOST_SIGNALS} | {-number for number in LOST_SIGNALS}


class HandOff:
    """``Worker.take_answer``'s word that the call goes on where waiting is allowed
    (``finish``); ``retire_reason``'s, without waiting, that it cannot say yet."""


HAND_OFF = HandOff()


class Worker:
    """One sandboxed worker process and the host's end of its pipes."""

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
        self._input = self.process.stdin.fileno()
        self._output = self.process.stdout.fileno()
        self._printed: int | None = self.process.stderr.fileno()
        for fd in (self._input, self._output):
            with contextlib.suppress(OSError):  # fewer, larger reads and writes
                fcntl.fcntl(fd, fcntl.F_SETPIPE_SZ, PIPE_BYTES)
        for fd in (self._input, self._output, self._printed):
            os.set_blocking(fd, False)  # each read or write tried first, waited for if need be
        self._capture = OutputCapture()
        self._keep_printed = False
        self._inbox = bytearray()  # an answer's first bytes, read on an event loop
        self._call_id = 0
        self._baseline: Usage | None = None  # once loaded: its processes and threads
        self._state = threading.Lock()
        self._busy = False
        self._stopped: str | None = None  # why the host stopped it between calls
        self.calls = 0
        self._interpreter: int | None = None  # the sandbox's interpreter, once loaded
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
        self._baseline = usage_of(self.pid, self._proc_files)
        self._interpreter = innermost(self.pid)
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

    def take_answer(self) -> dict | HandOff | None:
        """On an event loop, when the protocol pipe is readable: the call's answer, once it
        has all come; None while more is to come; HAND_OFF when the worker closed its pipe
        or wrote what is not the answer (a stale or garbled frame, one over the limit): its
        bytes are kept for ``finish``, which fails the call as ``exchange`` would. Never
        reads beyond the answer (what comes after it is written out of turn)."""
        inbox = self._inbox
        while True:
            wanted = HEADER.size
            if len(inbox) >= HEADER.size:
                size, body_size, call_id = HEADER.unpack_from(inbox)
                if self._refusal(size, body_size, call_id, first=True) is not None:
                    return HAND_OFF
                wanted += size + body_size
                if len(inbox) == wanted:
                    break
            try:
                chunk = os.read(self._output, wanted - len(inbox))
            except BlockingIOError:
                return None
            except OSError:
                return HAND_OFF
            if not chunk:
                return HAND_OFF
            inbox += chunk
        head_end = HEADER.size + size
        try:
            answer = decode(bytes(inbox[HEADER.size : head_end]), bytes(inbox[head_end:]))
        except ValueError:
            return HAND_OFF
        inbox.clear()
        return answer

    def pipes(self) -> tuple[int, int | None]:
        """The descriptors an event loop watches during a call: the protocol pipe, and the
        pipe of what the code prints (None once it closed)."""
        return self._output, self._printed

    def take_printed(self) -> bool:
        """On an event loop, when the printed pipe is readable: what waits in it kept with
        the call; False once the pipe closed (no longer to be watched)."""
        self._drain_printed()
        return self._printed is not None

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
        usage = usage_of(self.pid, self._proc_files)
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

    def _private_tmp(self) -> str | None:
        """Where the host sees the worker's ``/tmp`` (None: unconfined, it has none)."""
        if self._interpreter is None or self.settings.sandbox.mode == "off":
            return None
        return f"/proc/{self._interpreter}/root/tmp"

    def left_work_behind(self, usage: Usage | None = None, *, wait: bool = True) -> bool | None:
        """Whether the sandbox holds processes or threads beyond those it had once loaded, or
        the worker wrote on the protocol pipe out of turn; None, without ``wait``, when it
        holds more and a moment's wait would tell whether they are on their way out."""
        if self._wrote_out_of_turn():
            return True
        usage = usage or usage_of(self.pid, self._proc_files)
        if usage is None or self._baseline is None:
            return usage is None
        if usage.exceeds(self._baseline):
            if not wait:
                return None
            time.sleep(SETTLE_SECONDS)  # a thread joined a moment ago may still be exiting
            usage = usage_of(self.pid, self._proc_files)
        return usage is None or usage.exceeds(self._baseline)

    def cpu_seconds(self) -> float:
        """The CPU time the worker's sandbox has used, all its processes and threads."""
        usage = usage_of(self.pid, self._proc_files)
        return usage.cpu_seconds if usage else 0.0

    def usable(self) -> bool:
        """Whether the worker may take a call: alive, not stopped by the host, and nothing
        written on its protocol pipe since its last answer."""
        return not self._stopped and self.process.poll() is None and not self._wrote_out_of_turn()

    def _wrote_out_of_turn(self) -> bool:
        return bool(_ready({self._output: select.POLLIN}, 0))

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

    # --- the pipes ---------------------------------------------------------------------------

    def _drain_printed(self, until_closed: bool = False):
        """Read what the worker printed and is waiting in the pipe, ``DRAIN_READS`` reads at
        most (a worker printing as fast as it is read holds no one here: on the event loop,
        every tenant's calls wait meanwhile); all of it, up to its end, when the worker is
        gone."""
        deadline = time.monotonic() + 1
        reads = 0
        while self._printed is not None and (until_closed or reads < DRAIN_READS):
            reads += 1
            try:
                chunk = os.read(self._printed, READ_CHUNK)
            except BlockingIOError:
                if not until_closed or time.monotonic() > deadline:
                    return
                _ready({self._printed: select.POLLIN}, max(0, deadline - time.monotonic()))
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
            waited = {fd: select.POLLIN if reading else select.POLLOUT}
            if self._printed is not None:
                waited[self._printed] = select.POLLIN
            ready = _ready(waited, remaining)
            if self._printed is not None and self._printed in ready:
                self._drain_printed()
            if fd in ready:
                return
            if not ready:
                raise WorkerTimeout

    def _send(self, parts: list, deadline: float):
        views = [memoryview(part) for part in parts if part]
        while views:
            try:
                left = self._write_some(views)
            except OSError:
                raise self._gone("the worker closed its input") from None
            if left:  # the pipe is full: written once the worker reads
                self._wait(deadline, reading=False)
            views = left

    def _write_some(self, views: list) -> list[memoryview]:
        """Write what the pipe takes now of ``views``; what is left."""
        views = [memoryview(view) for view in views if view]
        try:
            written = os.writev(self._input, views) if views else 0
        except BlockingIOError:
            return views
        while written:
            if written >= len(views[0]):
                written -= len(views.pop(0))
            else:
                views[0], written = views[0][written:], 0
        return views

    def _receive(self, deadline: float, *, first: bool = False) -> dict:
        """The next frame; its size is checked against the limit before it is read. Its
        header is waited for (the worker is at work); the rest, written with it, is read
        without waiting unless it has not all come yet."""
        size, body_size, call_id = HEADER.unpack(self._read(HEADER.size, deadline, wait=True))
        refusal = self._refusal(size, body_size, call_id, first=first)
        if refusal is not None:
            raise refusal
        try:
            return decode(self._read(size, deadline), self._read(body_size, deadline))
        except ValueError as error:
            raise WorkerCrashed("the worker's answer is not a JSON object") from error

    def _refusal(self, size: int, body_size: int, call_id: int, *, first: bool):
        """Why a frame with this header is not the call's answer, or None: another call's
        (StaleAnswer when written after the last call's answer, else WorkerCrashed), or over
        the answer's limit (AnswerTooLarge)."""
        if call_id != self._call_id:
            wrote = f"the worker answered call {call_id} during call {self._call_id}"
            if first and call_id < self._call_id:  # written after its last call's answer
                return StaleAnswer(wrote)
            return WorkerCrashed(wrote)
        if size + body_size > self.settings.answer_bytes:
            return AnswerTooLarge(self.settings.answer_bytes)
        return None

    def _read(self, size: int, deadline: float, *, wait: bool = False) -> bytes:
        chunks = []
        if self._inbox:  # read by an event loop before the call came here
            chunks.append(bytes(self._inbox[:size]))
            del self._inbox[:size]
            size -= len(chunks[0])
        while size:
            if wait:
                self._wait(deadline, reading=True)
            try:
                chunk = os.read(self._output, min(size, READ_CHUNK))
            except BlockingIOError:
                wait = True
                continue
            if not chunk:
                raise self._gone("the worker closed its output")
            chunks.append(chunk)
            size -= len(chunk)
        return b"".join(chunks)

    def _gone(self, what: str) -> CallFailed:
        """Why the worker's pipe closed: WorkerLost when a signal the host did not send ended
        it (the kernel's OOM killer, someone's ``kill``), else WorkerCrashed."""
        try:
            code = self.process.wait(EXIT_WAIT_SECONDS)
        except subprocess.TimeoutExpired:
            return WorkerCrashed(what)
        if code in LOST_CODES:
            name = signal.Signals(code - 128 if code > 0 else -code).name
            return WorkerLost(f"the worker was stopped from outside ({name})")
        return WorkerCrashed(f"the worker exited ({code})")

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


def _ready(waited: dict[int, int], timeout: float) -> set[int]:
    """Which of the descriptors ``waited`` (each with the ``poll`` events it waits for) are
    ready within ``timeout`` seconds; a closed or failed pipe is ready (its read or write then
    says so). ``poll``, not ``select``: a host with hundreds of workers holds descriptors
    beyond ``select``'s 1,024."""
    poller = select.poll()
    for descriptor, events in waited.items():
        poller.register(descriptor, events)
    milliseconds = math.ceil(timeout * 1000)
    return {descriptor for descriptor, _ in poller.poll(milliseconds)}


def _error_text(error) -> str:
    """A worker's error report (its traceback) as the host passes it on: text, bounded."""
    return error[:ERROR_LIMIT] if isinstance(error, str) else ""
