"""Pools of sandboxed worker processes (``worker_process.py``), one per integration bundle
and installation, sized to the demand.

A worker serves the calls of one installation, never another's: what a call leaves in the
worker (a module's globals, a file in ``/tmp``) is seen by the same installation's next calls
alone. The installation is the organization's installation the signed environment names (a
space's or a site's installation is one of its); calls without one (the integration's own
public endpoint) have a pool of their own. The host keeps each version's bundle once, for
all of its installations' pools.

A pool starts with no worker. A call that finds no worker free has one started for it (a
spare, ``spares.py``, when there is one; the host-wide caps decide whose idle worker makes
room, and the fair share who goes first, ``capacity.py``), up to ``workers_max``, and takes
whichever worker is free first; it waits at most ``queue_timeout``, and at most
``max_queued`` calls of one integration wait at once (beyond them: ``PoolBusy`` at once), so
waiting calls cannot hold every request thread of the host. A worker idle for
``worker_idle_seconds`` is stopped, down to ``workers_min``. A call over its time limit, a
crash, a garbled answer, work left behind or half the CPU budget spent, or its open files,
address space or ``/tmp`` all but used up, stops the worker and everything it started. A
pool unused for ``pool_idle_seconds`` is closed; when a version has no pool left, the host
forgets its bundle (the next call is answered 409 ``bundle_required``).
"""

import logging
import threading
import time
from collections import deque
from collections.abc import Callable
from typing import TYPE_CHECKING, Protocol

from . import after_reply
from .call_failures import PoolBusy, ScriptLoadError, StaleAnswer, WorkerCrashed, WorkerTimeout
from .capacity import WORKER_BYTES_ESTIMATE
from .spares import Slot
from .worker_process import LOAD_ERROR_MEMORY
from .worker_start import Egress

if TYPE_CHECKING:
    from .registry import PoolRegistry, Version

logger = logging.getLogger("integrations.runtime")

#: What a 503 ``busy`` answer's ``Retry-After`` says (seconds).
RETRY_AFTER_SECONDS = 1
#: ``WorkerPool.checkout_on_loop``'s word that the call waits for a worker.
QUEUED = "queued"


class Waiter(Protocol):
    """A call of an event loop waiting for a worker (``WorkerPool.checkout_on_loop``); each
    method may be called on any thread, with the capacity's lock held: it must only hand
    the work to its loop."""

    def given(self, slot: Slot) -> None: ...

    def refused(self, failure: Exception) -> None: ...

    def call_on_loop(self, callback: Callable[[], None]) -> None: ...


def installation_of(environment: dict) -> str | None:
    """Whose calls a worker serves: the id of the organization's installation in the call's
    signed environment (checked by ``envelope.parse``), or None for a call without one."""
    installation = environment.get("installation")
    return None if installation is None else str(installation.get("id"))


class WorkerPool:
    """The workers of one bundle for one installation. Its state is guarded by
    ``capacity.lock``; its waiting calls wait on ``available`` (``capacity.py``)."""

    def __init__(self, version: "Version", registry: "PoolRegistry"):
        self.version = version
        self.name, self.bundle = version.name, version.bundle
        self.capacity, self.spares = registry.capacity, registry.spares
        self.available = threading.Condition(self.capacity.lock)
        self.settings, self.limits = registry.settings, registry.pool_settings
        self.bundles = registry.bundles
        self.last_used = time.monotonic()
        self.count = 0  # workers alive or starting
        self.slots: set[Slot] = set()  # workers alive
        self._idle: list[tuple[Slot, float]] = []  # and since when, the oldest first
        self._starting = 0
        self._waiting = 0  # calls waiting for a worker
        self._busy = 0  # calls holding one
        self._settling = 0  # of them, answered, the host's accounts of their worker to come
        self._closed = False
        self._start_failures: list[Exception] = []  # each raised to one waiting call
        # Calls of an event loop waiting for a worker, first come first served (``Waiter``).
        self._loop_waiters: deque[Waiter] = deque()
        self._regrow_asked = False
        with self.capacity.changed:
            self.capacity.pools.add(self)

    def call(self, message: dict, egress: Egress | None = None, *, again: bool = True) -> dict:
        """Run one call on a free worker. Raises ScriptLoadError, PoolBusy, WorkerTimeout or
        WorkerCrashed; in the last two cases the worker is stopped. A worker that wrote out of
        turn before the call (StaleAnswer: nothing of the call was acted on) is stopped and the
        call runs once more on another worker, so its code never fails another caller.
        The worker is given back once the host has accounted for it, after the answer is
        sent (``_settle``)."""
        slot = self._checkout()
        timeout = self.settings.call_timeout
        return self.answered(
            slot, lambda: slot.worker.exchange(message, timeout, egress), message, egress, again
        )

    def answered(
        self,
        slot: Slot,
        exchanging: Callable[[], dict],
        message: dict,
        egress: Egress | None = None,
        again: bool = True,
    ) -> dict:
        """The answer of the call ``exchanging()`` carries on ``slot``'s worker (checked out for
        it: ``call``, or ``checkout_on_loop`` on an event loop), each failure handled as
        ``call`` says; the host's accounts of the worker left for after the answer is sent."""
        worker = slot.worker
        try:
            answer = exchanging()
        except StaleAnswer as error:
            logger.warning("integration %s: worker %s %s", self.name, worker.pid, error)
            self._checkin(slot, keep=False)
            if again:
                return self.call(message, egress, again=False)
            raise
        except (WorkerTimeout, WorkerCrashed) as error:
            logger.warning(
                "integration %s: worker %s %s",
                self.name,
                worker.pid,
                f"crashed: {error}" if isinstance(error, WorkerCrashed) else "timed out",
            )
            self._checkin(slot, keep=False)
            raise
        except BaseException:
            # Anything else (a bug of ours on the worker's input): its state is unknown.
            logger.exception("integration %s: worker %s failed", self.name, worker.pid)
            self._checkin(slot, keep=False)
            raise
        # The host's accounts of the worker (is it to be replaced?) wait for the answer to
        # be sent (``after_reply``); the worker takes no other call before they are done.
        asked_to_retire = answer.pop("retire", None) is True
        with self.capacity.changed:
            self._settling += 1
        after_reply.defer(_Settle(self, slot, asked_to_retire))
        return answer

    def checkout_on_loop(self, waiter: "Waiter") -> Slot | str:
        """An event loop's ``_checkout``, which never waits: a free worker at once; else
        QUEUED, and ``waiter`` is given the first worker free for it (``given``, called on
        whichever thread freed it) or told why none will come (``refused``: the code's load
        error, a start's failure, PoolBusy once the pool closes; ``give_up`` after its own
        ``queue_timeout``). PoolBusy at once with ``max_queued`` calls waiting, the load
        error while it is remembered."""
        capacity = self.capacity
        with capacity.changed:
            if self._closed or (
                not self._idle and capacity.queued[self.name] >= self.limits.max_queued
            ):
                raise PoolBusy
            if not self._waiting and (slot := self._usable_idle()) is not None:
                self._busy += 1
                return slot
            self._check_load_error()
            self._queued()
            self._loop_waiters.append(waiter)
            self._grow()
            return QUEUED

    def give_up(self, waiter: "Waiter") -> bool:
        """Take ``waiter`` out of the queue (its time is up): False when it was given a
        worker or refused meanwhile (that is on its way to it)."""
        with self.capacity.changed:
            if waiter not in self._loop_waiters:
                return False
            self._loop_waiters.remove(waiter)
            self._dequeued()
            return True

    def regrow(self):
        """On the event loop, once the capacity changed (``woken``): what a waiting thread
        does when woken, for the loop's waiting calls."""
        with self.capacity.changed:
            self._regrow_asked = False
            try:
                self._check_load_error()  # the version's code failed in another pool
            except ScriptLoadError:
                self._refuse_loop_waiters(self.version.load_error.again)
                return
            self._serve_loop_waiters()
            if self._loop_waiters:
                self._grow()

    def _settle(self, slot: Slot, asked_to_retire: bool):
        """After a call: the worker is idle again, unless the host's verdict
        (``retire_reason``: work left behind, half the CPU budget spent, open files, address
        space or /tmp all but used up) or the worker itself (a MemoryError) says it goes."""
        worker = slot.worker
        try:
            reason = "it asked to be (a MemoryError)" if asked_to_retire else None
            reason = reason or worker.retire_reason()
        except Exception:
            logger.exception("integration %s: worker %s not accounted", self.name, worker.pid)
            reason = "its accounts could not be read"
        if reason:
            logger.info("integration %s: worker %s replaced: %s", self.name, worker.pid, reason)
        with self.capacity.changed:
            self._settling -= 1
        self._checkin(slot, keep=not reason)

    def _settle_without_waiting(self, slot: Slot, asked_to_retire: bool) -> bool:
        """``_settle`` on an event loop when the worker is kept as it is: True once done;
        False, nothing done, when the verdict needs a wait or the worker goes (stopping it
        waits for its end): ``_settle`` then, where waiting is allowed."""
        if asked_to_retire or slot.worker.retire_reason(wait=False) is not None:
            return False
        with self.capacity.changed:
            if not self._may_keep():
                return False
            self._settling -= 1
            self._kept(slot)
        return True

    # With ``capacity.changed`` held:

    def woken(self):
        """The capacity changed (``Capacity.notify_all``): the loop's waiting calls look
        again, as waiting threads do (``regrow``, on the loop)."""
        if self._loop_waiters and not self._regrow_asked:
            self._regrow_asked = True
            self._loop_waiters[0].call_on_loop(self.regrow)

    def _queued(self):
        self._waiting += 1
        self.capacity.queued[self.name] += 1

    def _dequeued(self):
        self._waiting -= 1
        if not self._waiting:
            self._start_failures.clear()
        queued = self.capacity.queued
        queued[self.name] -= 1
        if not queued[self.name]:
            del queued[self.name]

    def _usable_idle(self) -> Slot | None:
        """The most recently used idle worker (as ``_checkout`` takes), those stopped while
        idle forgotten on the way (each stopped on a thread of its own: an event loop holds
        the lock here); None when none is left."""
        while self._idle:
            slot = self._idle.pop()[0]
            if slot.worker.usable():
                return slot
            self._forget(slot)
            threading.Thread(target=slot.stop, daemon=True).start()
        return None

    def _serve_loop_waiters(self):
        """Each idle worker to the loop's waiting calls, the first come first."""
        while self._loop_waiters and (slot := self._usable_idle()) is not None:
            waiter = self._loop_waiters.popleft()
            self._busy += 1
            self._dequeued()
            waiter.given(slot)

    def _refuse_loop_waiters(self, failure: Callable[[], Exception], count: int | None = None):
        for _ in range(len(self._loop_waiters) if count is None else count):
            waiter = self._loop_waiters.popleft()
            self._dequeued()
            waiter.refused(failure())

    def _may_keep(self) -> bool:
        """Whether a worker given back stays, idle: not once the pool is closed, nor when
        another integration waiting with fewer workers should have its slot."""
        return not self._closed and not self.capacity.should_yield(self.name)

    def _kept(self, slot: Slot):
        self._busy -= 1
        self.last_used = time.monotonic()
        self._idle.append((slot, self.last_used))
        self._serve_loop_waiters()
        if not self._idle:
            return
        if self._waiting:  # one of them takes it
            self.available.notify()
        elif self.capacity.queued:  # another pool's call may make room with it (``victim``)
            self.capacity.notify_all()

    def wants_worker(self) -> bool:
        """Whether a call waits that no starting worker will serve, and one may start."""
        return (
            not self._closed
            and self.version.load_error is None
            and self._waiting > self._starting + self._settling
            and self.count < self.limits.workers_max
        )

    def has_idle(self) -> bool:
        """Whether a worker is idle that no call of this pool waits for."""
        return bool(self._idle) and not self._waiting

    def idle_longest(self) -> float:
        """Since when its least recently used idle worker has been idle."""
        return self._idle[0][1]

    def idle_since(self) -> float | None:
        """When the pool was last used, or None while a call runs or waits."""
        return None if self._busy or self._waiting else self.last_used

    def _checkout(self) -> Slot:
        capacity, limits = self.capacity, self.limits
        deadline = time.monotonic() + limits.queue_timeout
        with capacity.changed:
            if self._closed or (not self._idle and capacity.queued[self.name] >= limits.max_queued):
                raise PoolBusy
            self._queued()
            try:
                while True:
                    while self._idle:
                        slot = self._idle.pop()[0]  # the most recently used: others age out
                        if slot.worker.usable():
                            self._busy += 1
                            return slot
                        self._forget(slot)  # stopped by the host while idle
                        slot.stop()
                    self._check_load_error()
                    if self._start_failures:
                        raise self._start_failures.pop(0)
                    self._grow()
                    remaining = deadline - time.monotonic()
                    if self._closed or remaining <= 0:
                        raise PoolBusy
                    self.available.wait(remaining)
            finally:
                self._dequeued()

    def _check_load_error(self):
        """Raise the version's load error while it is remembered (``Version``)."""
        version = self.version
        if version.load_error is not None:
            if time.monotonic() - version.load_failed_at < LOAD_ERROR_MEMORY:
                raise version.load_error.again()
            version.load_error = None

    def _grow(self):
        """Start a worker in the background for a waiting call, if this integration holds the
        fewest workers of those waiting: in a free slot, or in the slot of the least recently
        used idle worker of another pool; a spare when there is one, else a new one."""
        capacity = self.capacity
        if not self.wants_worker() or not capacity.first_in_line(self.name):
            return
        evicted = None
        if not capacity.has_room():
            victim = capacity.victim(self)
            if victim is None:
                return
            evicted = victim._evict()
        slot = self.spares.take()
        capacity.take(self.name)
        self.count += 1
        self._starting += 1
        threading.Thread(target=self._start, args=(slot, evicted), daemon=True).start()

    def _evict(self) -> Slot:
        """Give up the oldest idle worker's slot; the caller stops the worker."""
        slot, _since = self._idle.pop(0)
        self._forget(slot)
        return slot

    def _forget(self, slot: Slot):
        self.slots.discard(slot)
        self.count -= 1
        self.capacity.give_back(self.name, slot.memory)

    def shrink(self, now: float) -> list[Slot]:
        """Give up the workers idle for ``worker_idle_seconds``, down to ``workers_min``;
        the caller stops them."""
        stopped = []
        while (
            self._idle
            and self.count > self.limits.workers_min
            and now - self._idle[0][1] >= self.limits.worker_idle_seconds
        ):
            stopped.append(self._evict())
        return stopped

    # Without the lock:

    def _start(self, slot: Slot | None, evicted: Slot | None):
        """Bind a spare (or a new worker) to this bundle: write the bundle into its folder
        and load the code; then it is idle, for a waiting call to take."""
        if evicted is not None:
            evicted.stop()
        error = None
        try:
            slot = slot or Slot.start(self.settings, self.bundles)
            self.bundle.write(slot.folder)
            slot.worker.load(self.name, self.bundle.script)
        except ScriptLoadError as failure:
            error = failure
        except (WorkerCrashed, WorkerTimeout, OSError) as failure:
            logger.warning("integration %s: a worker failed to start: %s", self.name, failure)
            error = failure
        except Exception as failure:
            logger.exception("integration %s: a worker failed to start", self.name)
            error = failure
        with self.capacity.changed:
            self._starting -= 1
            if error is None and not self._closed:
                self.capacity.loads += 1
                self.slots.add(slot)
                self._idle.append((slot, time.monotonic()))
                self._serve_loop_waiters()
                self.capacity.notify_all()
                return
            self.count -= 1
            self.capacity.give_back(self.name, WORKER_BYTES_ESTIMATE)
            if isinstance(error, ScriptLoadError):
                self.version.load_error, self.version.load_failed_at = error, time.monotonic()
                self._refuse_loop_waiters(error.again)
            elif error is not None and self._loop_waiters:
                self._refuse_loop_waiters(lambda: error, count=1)
            elif error is not None:
                self._start_failures.append(error)
        if slot is not None:
            slot.stop()

    def _checkin(self, slot: Slot, keep: bool):
        """A call ended: the worker is idle again, unless it must go or another integration
        waiting with fewer workers should have its slot."""
        with self.capacity.changed:
            if keep and self._may_keep():
                self._kept(slot)
                return
            self._busy -= 1
            self.last_used = time.monotonic()
            self._forget(slot)
        slot.stop()

    def close(self):
        """Stop the idle workers now, the busy and starting ones when they are done."""
        with self.capacity.changed:
            self._closed = True
            self._refuse_loop_waiters(PoolBusy)
            self.capacity.pools.discard(self)
            idle = [self._evict() for _ in list(self._idle)]
            self.capacity.notify_all()
            self.available.notify_all()  # no longer among the capacity's pools
        for slot in idle:
            slot.stop()


class _Settle:
    """A call's worker accounted for once its answer is sent (``after_reply``): where waiting
    is allowed when called; on an event loop, ``without_waiting`` when it can be."""

    __slots__ = ("asked_to_retire", "pool", "slot")

    def __init__(self, pool: WorkerPool, slot: Slot, asked_to_retire: bool):
        self.pool, self.slot, self.asked_to_retire = pool, slot, asked_to_retire

    def __call__(self):
        self.pool._settle(self.slot, self.asked_to_retire)

    def without_waiting(self) -> bool:
        return self.pool._settle_without_waiting(self.slot, self.asked_to_retire)
