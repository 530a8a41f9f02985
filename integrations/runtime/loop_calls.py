"""A call carried on the frame server's event loop, with no thread of its own.

The loop checks a frame, takes a free worker (``WorkerPool.checkout_on_loop``: at once, or
the first one freed for it while it waits in the pool's queue), writes the message to its
pipe and watches its pipes; the answer, once it has all come, is sent back on the frame's
connection and the worker accounted for (``after_reply.run_without_waiting``), all on the
loop. No hand-off between threads, no wake-up of the loop from another: under load these
were most of the host's CPU (its kernel's share: switches and interpreter-lock waits).

Whatever must wait goes on to a thread of the frame server (``FrameServer.on_thread``) where
it is, with the same code a thread's call runs (``Worker.finish``, ``WorkerPool.answered``,
``RuntimeHost.call``): the worker asking for an HTTP request (egress), a message the pipe
does not take whole, an answer that is not the call's (a stale, garbled or oversized frame,
a closed pipe), the call's time limit, and the accounts of a worker that goes (stopping it
waits for its end).
"""

import asyncio
import contextlib
import threading
import time

from .call_failures import PoolBusy
from .calls import Call
from .pool import QUEUED
from .spares import Slot
from .worker_pipes import HAND_OFF


class LoopCall:
    """One call on the loop, from its worker's checkout to its answer or its hand-off; while
    it waits for a worker, the pool's ``Waiter``."""

    def __init__(self, server, connection, call_id: int, call: Call, logged):
        self.server, self.connection, self.call_id = server, connection, call_id
        self.call, self.logged = call, logged
        self.loop = asyncio.get_running_loop()
        self.loop_thread = threading.get_ident()
        self.slot: Slot | None = None
        self.deadline = 0.0
        self.timer: asyncio.TimerHandle | None = None
        self.watched: list[int] = []
        self.printed: int | None = None

    def begin(self):
        """A worker taken, or the call queued for one (``given``), or its failure answered."""
        pool = self.call.pool
        try:
            taken = pool.checkout_on_loop(self)
        except Exception as failure:  # PoolBusy, the code's load error
            self._answer(raising(failure), checked_out=False)
            return
        if taken is QUEUED:
            self.timer = self.loop.call_later(pool.limits.queue_timeout, self._waited_too_long)
        else:
            self.start(taken)

    # The pool's ``Waiter``: on any thread, the capacity's lock held.

    def given(self, slot: Slot):
        self.call_on_loop(lambda: self.start(slot))

    def refused(self, failure: Exception):
        self.call_on_loop(lambda: self._answer(raising(failure), checked_out=False))

    def call_on_loop(self, callback):
        if threading.get_ident() == self.loop_thread:
            self.loop.call_soon(callback)
            return
        with contextlib.suppress(RuntimeError):  # the loop is closed: the host is stopping
            self.loop.call_soon_threadsafe(callback)

    def _waited_too_long(self):
        self.timer = None
        if self.call.pool.give_up(self):  # else given or refused meanwhile: on its way here
            self._answer(raising(PoolBusy()), checked_out=False)

    # With a worker:

    def start(self, slot: Slot):
        self.slot = slot
        if self.timer is not None:
            self.timer.cancel()
        worker = self.slot.worker
        timeout = self.call.pool.settings.call_timeout
        self.deadline = time.monotonic() + timeout
        try:
            pending = worker.start(self.call.message)
        except Exception as failure:  # not begun (WorkerLost): failed as a thread's call is
            self._hand_off(raising(failure))
            return
        if pending:
            self._hand_off(lambda: worker.finish(self.deadline, self.call.egress, pending=pending))
            return
        output, printed = worker.pipes()
        self._watch(output, self._readable)
        if printed is not None:
            self.printed = printed
            self._watch(printed, self._printed)
        self.timer = self.loop.call_later(timeout, self._timed_out)

    def _watch(self, descriptor: int, callback):
        self.loop.add_reader(descriptor, callback)
        self.watched.append(descriptor)

    def _unwatch(self):
        """Before the call goes anywhere else: its pipes may be closed once it has."""
        for descriptor in self.watched:
            self.loop.remove_reader(descriptor)
        self.watched.clear()
        if self.timer is not None:
            self.timer.cancel()

    def _printed(self):
        if not self.slot.worker.take_printed():  # closed: ready for ever, watched no more
            self.loop.remove_reader(self.printed)
            self.watched.remove(self.printed)

    def _readable(self):
        worker = self.slot.worker
        try:
            answer = worker.take_answer()
        except Exception:
            answer = HAND_OFF  # ``finish`` meets it again and fails the call as it must
        if answer is None:
            return  # more to come
        self._unwatch()
        egress = self.call.egress
        if answer is HAND_OFF:
            self._hand_off(lambda: worker.finish(self.deadline, egress))
        elif "fetch" in answer:
            self._hand_off(lambda: worker.finish(self.deadline, egress, answer=answer))
        else:
            self._answer(lambda: worker.finish(self.deadline, egress, answer=answer))

    def _timed_out(self):
        self.timer = None
        self._unwatch()
        worker = self.slot.worker  # its ``finish`` finds the time up: WorkerTimeout
        self._hand_off(lambda: worker.finish(self.deadline, self.call.egress))

    def _answer(self, exchanging, checked_out: bool = True):
        """The answer sent, here; the worker accounted for here when that needs no wait.
        Without a worker (``checked_out`` False), ``exchanging`` raises why there is none."""
        server = self.server
        replying = (
            (lambda: self._reply(exchanging))
            if checked_out
            else (lambda: server.app.call(self.call, exchanging))
        )
        server.answer_on_loop(self.connection, self.call_id, replying, self.logged)

    def _hand_off(self, exchanging):
        """The rest of the call on a thread: ``exchanging`` carries it to its answer or
        raises its failure, handled as a thread's call's (``WorkerPool.answered``)."""
        replying = lambda: self._reply(exchanging)  # noqa: E731
        self.server.on_thread(self.call_id, self.connection, replying, self.logged)

    def _reply(self, exchanging):
        call, slot = self.call, self.slot
        answered = lambda: call.pool.answered(slot, exchanging, call.message, call.egress)  # noqa: E731
        return self.server.app.call(call, answered)


def raising(failure: BaseException):
    """A call's ``exchanging`` (or ``replying``) that raises ``failure``."""

    def exchanging():
        raise failure

    return exchanging
