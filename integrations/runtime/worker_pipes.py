"""The host's end of a worker's pipes (``worker_process.Worker`` is one): the protocol's
frames written and read, waiting for them on a thread or without waiting on an event loop,
and what the worker prints (its stdout and stderr, one pipe apart from the protocol's) kept
with the call it was printed in.

The pipes are non-blocking: each read or write is tried first and waited for (``poll``) only
when the pipe is not ready, so an event loop can carry a call with the same code a thread
does. What it reads that the ``Worker`` sets: ``process`` (the sandbox's ``Popen``), ``settings``
(``answer_bytes``: an answer's limit) and ``_call_id`` (the call in progress).
"""

import contextlib
import fcntl
import math
import os
import select
import signal
import subprocess
import time

from docplatform_sdk.framing import HEADER, decode

from .call_failures import (
    AnswerTooLarge,
    CallFailed,
    OutputCapture,
    StaleAnswer,
    WorkerCrashed,
    WorkerLost,
    WorkerTimeout,
)

READ_CHUNK = 1024 * 1024
PIPE_BYTES = 1024 * 1024
#: How long a crashed worker's exit status is waited for; how long a thread may take to end.
EXIT_WAIT_SECONDS = 1
#: Reads of the printed pipe at a time, but for a worker that is gone (64 KiB each at most).
DRAIN_READS = 16
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


class WorkerPipes:
    """The host's end of one worker's protocol pipes and printed pipe."""

    def _open_pipes(self):
        self._input = self.process.stdin.fileno()
        self._output = self.process.stdout.fileno()
        self._printed: int | None = self.process.stderr.fileno()
        for fd in (self._input, self._output):
            with contextlib.suppress(OSError):  # fewer, larger reads and writes
                fcntl.fcntl(fd, fcntl.F_SETPIPE_SZ, PIPE_BYTES)
        for fd in (self._input, self._output, self._printed):
            os.set_blocking(fd, False)  # each read or write tried first, waited for if need be
        self._capture = OutputCapture()
        self._inbox = bytearray()  # an answer's first bytes, read on an event loop
        self._call_id = 0
        # Asked before and after each call whether the worker wrote out of turn: made once.
        self._output_poll = select.poll()
        self._output_poll.register(self._output, select.POLLIN)

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

    def _wrote_out_of_turn(self) -> bool:
        """Whether the protocol pipe holds bytes (or closed) between calls."""
        try:
            return bool(self._output_poll.poll(0))
        except RuntimeError:  # another thread's poll() of it at this moment
            return bool(_ready({self._output: select.POLLIN}, 0))

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
