"""Pools of sandboxed worker processes (``worker_process.py``), one per integration bundle,
sized to the demand.

A pool starts with no worker. A call that finds no worker free has one started for it (a
spare, ``spares.py``, when there is one; the host-wide cap and fair share decide when there
is none, ``capacity.py``), up to ``workers_max``, and takes whichever worker is free first;
it waits at most ``queue_timeout``, and at most ``max_queued`` calls of one integration wait
at once (beyond them: ``PoolBusy`` at once), so waiting calls cannot hold every request
thread of the host. A worker idle for ``worker_idle_seconds`` is stopped, down to
``workers_min``. A call over its time limit, a crash, a garbled answer, work left behind or
half the CPU budget spent stops the worker and everything it started. A pool unused for
``pool_idle_seconds`` is closed: the host forgets the bundle (the next call is answered 409
``bundle_required``).
"""

import logging
import threading
import time
from collections import OrderedDict
from pathlib import Path

from docplatform_sdk.codebundle import CodeBundle

from .call_failures import PoolBusy, ScriptLoadError, StaleAnswer, WorkerCrashed, WorkerTimeout
from .capacity import Capacity, PoolSettings, resident_bytes
from .spares import Slot, Spares
from .worker_process import LOAD_ERROR_MEMORY, Egress, WorkerSettings

logger = logging.getLogger("integrations.runtime")

#: What a 503 ``busy`` answer's ``Retry-After`` says (seconds).
RETRY_AFTER_SECONDS = 1


class WorkerPool:
    """The workers of one bundle. Its state is guarded by ``capacity.changed``."""

    def __init__(self, name: str, bundle: CodeBundle, registry: "PoolRegistry"):
        self.name, self.bundle = name, bundle
        self.capacity, self.spares = registry.capacity, registry.spares
        self.settings, self.limits = registry.settings, registry.pool_settings
        self.bundles = registry.bundles
        self.last_used = time.monotonic()
        self.count = 0  # workers alive or starting
        self.slots: set[Slot] = set()  # workers alive
        self._idle: list[tuple[Slot, float]] = []  # and since when, the oldest first
        self._starting = 0
        self._waiting = 0  # calls waiting for a worker
        self._busy = 0  # calls holding one
        self._closed = False
        self._load_error: ScriptLoadError | None = None  # repeated for a while
        self._load_failed_at = 0.0
        self._start_failures: list[Exception] = []  # each raised to one waiting call
        with self.capacity.changed:
            self.capacity.pools.add(self)

    def call(self, message: dict, egress: Egress | None = None, *, again: bool = True) -> dict:
        """Run one call on a free worker. Raises ScriptLoadError, PoolBusy, WorkerTimeout or
        WorkerCrashed; in the last two cases the worker is stopped. A worker that wrote out of
        turn before the call (StaleAnswer: nothing of the call was acted on) is stopped and the
        call runs once more on another worker, so its code never fails another caller."""
        slot = self._checkout()
        worker = slot.worker
        try:
            answer = worker.exchange(message, self.settings.call_timeout, egress)
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
        # ``retire``: the host's verdict (work left behind, half the CPU budget spent).
        self._checkin(slot, keep=not answer.get("retire"))
        return answer

    # With ``capacity.changed`` held:

    def wants_worker(self) -> bool:
        """Whether a call waits that no starting worker will serve, and one may start."""
        return (
            not self._closed
            and self._load_error is None
            and self._waiting > self._starting
            and self.count < self.limits.workers_max
        )

    def has_idle(self) -> bool:
        """Whether a worker is idle that no call of this pool waits for."""
        return bool(self._idle) and not self._waiting

    def idle_since(self) -> float | None:
        """When the pool was last used, or None while a call runs or waits."""
        return None if self._busy or self._waiting else self.last_used

    def _checkout(self) -> Slot:
        capacity, limits = self.capacity, self.limits
        deadline = time.monotonic() + limits.queue_timeout
        with capacity.changed:
            if self._closed or (not self._idle and capacity.queued[self.name] >= limits.max_queued):
                raise PoolBusy
            self._waiting += 1
            capacity.queued[self.name] += 1
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
                    capacity.changed.wait(remaining)
            finally:
                self._waiting -= 1
                if not self._waiting:
                    self._start_failures.clear()
                capacity.queued[self.name] -= 1
                if not capacity.queued[self.name]:
                    del capacity.queued[self.name]

    def _check_load_error(self):
        if self._load_error is not None:
            if time.monotonic() - self._load_failed_at < LOAD_ERROR_MEMORY:
                raise self._load_error.again()
            self._load_error = None

    def _grow(self):
        """Start a worker in the background for a waiting call, when one may start: a spare;
        else a new one in a free slot, or in the slot of an idle worker of another pool, if
        this integration holds the fewest workers of those waiting."""
        capacity = self.capacity
        if not self.wants_worker():
            return
        slot, evicted = self.spares.take(), None
        if slot is None:
            if not capacity.first_in_line(self.name):
                return
            if not capacity.has_room():
                victim = capacity.victim(self)
                if victim is None:
                    return
                evicted = victim._evict()
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
        self.capacity.give_back(self.name)

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
                self.slots.add(slot)
                self._idle.append((slot, time.monotonic()))
                self.capacity.changed.notify_all()
                return
            self.count -= 1
            self.capacity.give_back(self.name)
            if isinstance(error, ScriptLoadError):
                self._load_error, self._load_failed_at = error, time.monotonic()
            elif error is not None:
                self._start_failures.append(error)
        if slot is not None:
            slot.stop()

    def _checkin(self, slot: Slot, keep: bool):
        """A call ended: the worker is idle again, unless it must go or another integration
        waiting with fewer workers should have its slot."""
        capacity = self.capacity
        with capacity.changed:
            self._busy -= 1
            self.last_used = time.monotonic()
            if keep and not self._closed and not capacity.should_yield(self.name):
                self._idle.append((slot, self.last_used))
                capacity.changed.notify_all()
                return
            self._forget(slot)
        slot.stop()

    def close(self):
        """Stop the idle workers now, the busy and starting ones when they are done."""
        with self.capacity.changed:
            self._closed = True
            self.capacity.pools.discard(self)
            idle = [self._evict() for _ in list(self._idle)]
            self.capacity.changed.notify_all()
        for slot in idle:
            slot.stop()


class PoolRegistry:
    """The pools of the bundles this host serves, keyed by (integration name, the SHA-256 the
    host computed of the bundle); the least recently used one is closed beyond ``max_pools``.
    A thread closes the pools unused for ``pool_idle_seconds``, stops the workers idle for
    ``worker_idle_seconds`` and samples the workers' memory."""

    def __init__(self, settings: WorkerSettings, pool_settings: PoolSettings):
        self.settings, self.pool_settings = settings, pool_settings
        self.capacity = Capacity(pool_settings)
        self.bundles = Path(settings.sandbox.stage, "bundles")
        self.spares = Spares(self.capacity, settings, self.bundles)
        self._pools: OrderedDict[tuple[str, str], WorkerPool] = OrderedDict()
        self._lock = threading.Lock()
        self._stopped = threading.Event()
        threading.Thread(target=self._maintain, name="pools", daemon=True).start()

    def get(self, key: tuple[str, str]) -> WorkerPool | None:
        with self._lock:
            pool = self._pools.get(key)
            if pool is not None:
                self._pools.move_to_end(key)
                pool.last_used = time.monotonic()
            return pool

    def create(self, key: tuple[str, str], bundle: CodeBundle) -> WorkerPool:
        """The pool of ``key``, made from ``bundle`` when there is none yet."""
        evicted = []
        with self._lock:
            pool = self._pools.get(key)
            if pool is not None:
                return pool
            pool = self._pools[key] = WorkerPool(key[0], bundle, self)
            while len(self._pools) > self.pool_settings.max_pools:
                evicted.append(self._pools.popitem(last=False)[1])
        for old in evicted:
            old.close()
        return pool

    def __len__(self):
        with self._lock:
            return len(self._pools)

    def workers(self) -> dict:
        """The workers of each pool (alive or starting), as ``{"pools": [{"integration",
        "bundle" (its SHA-256's first 12 digits), "workers", "busy"}], "spares": n}``."""
        with self._lock:
            pools = list(self._pools.items())
        with self.capacity.changed:
            return {
                "pools": [
                    {
                        "integration": name,
                        "bundle": digest[:12],
                        "workers": pool.count,
                        "busy": pool._busy,
                    }
                    for (name, digest), pool in pools
                ],
                "spares": len(self.spares.slots),
            }

    def retire_idle(self, now: float | None = None) -> int:
        """Close the pools unused for ``pool_idle_seconds`` and stop the workers idle for
        ``worker_idle_seconds``; returns how many pools were closed."""
        now = time.monotonic() if now is None else now
        retired, stopped = [], []
        with self._lock, self.capacity.changed:
            for key, pool in list(self._pools.items()):
                since = pool.idle_since()
                if since is not None and now - since >= self.pool_settings.pool_idle_seconds:
                    retired.append(self._pools.pop(key))
                else:
                    stopped += pool.shrink(now)
        for pool in retired:
            logger.info("integration %s: pool retired after being idle", pool.name)
            pool.close()
        for slot in stopped:
            slot.stop()
        return len(retired)

    def sample_memory(self):
        """Measure the resident memory of every worker, spares included."""
        with self.capacity.changed:
            slots = [
                *self.spares.slots,
                *(slot for pool in self.capacity.pools for slot in pool.slots),
            ]
        total = sum(resident_bytes(slot.worker.pid) for slot in slots)
        with self.capacity.changed:
            self.capacity.memory = total
            self.capacity.changed.notify_all()

    def _maintain(self):
        limits = self.pool_settings
        interval = max(0.1, min(1.0, limits.worker_idle_seconds / 4, limits.pool_idle_seconds / 4))
        while not self._stopped.wait(interval):
            self.retire_idle()
            self.sample_memory()

    def close(self):
        self._stopped.set()
        with self._lock:
            pools, self._pools = list(self._pools.values()), OrderedDict()
        for pool in pools:
            pool.close()
        self.spares.close()
