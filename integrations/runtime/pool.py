"""Pools of pre-started, sandboxed worker processes (``worker_process.py``), one pool per
integration bundle.

A call over its time limit, a crash or a garbled answer kills the worker and everything it
started, and a replacement is started in the background. Pools of bundles no longer called
are closed after ``pool_idle_seconds``, so the host's memory follows the versions in use, not
every version ever published.
"""

import logging
import shutil
import threading
import time
from collections import OrderedDict
from pathlib import Path

from docplatform_sdk.codebundle import CodeBundle

from .worker_process import (
    LOAD_ERROR_MEMORY,
    Egress,
    PoolBusy,
    ScriptLoadError,
    Worker,
    WorkerCrashed,
    WorkerSettings,
    WorkerTimeout,
)

logger = logging.getLogger("integrations.runtime")


class WorkerPool:
    """The workers of one bundle: up to ``workers_per_version``, each serving one call at a
    time; calls wait at most ``queue_timeout`` for a free one."""

    def __init__(self, name: str, bundle: CodeBundle, folder: Path, settings: WorkerSettings):
        self.name, self.settings = name, settings
        self.folder, self.script = folder, bundle.script
        bundle.write(folder)
        self.last_used = time.monotonic()
        self._idle: list[Worker] = []
        self._count = 0  # workers alive or starting
        self._busy = 0
        self._closed = False
        self._load_error: ScriptLoadError | None = None  # repeated for a while
        self._load_failed_at = 0.0
        self._changed = threading.Condition()

    def prestart(self, count: int):
        """Start ``count`` workers in the background."""
        for _ in range(count):
            threading.Thread(target=self._replenish, daemon=True).start()

    def call(self, message: dict, egress: Egress | None = None) -> dict:
        """Run one call on a free worker. Raises ScriptLoadError, PoolBusy, WorkerTimeout or
        WorkerCrashed; in the last two cases the worker is replaced."""
        worker = self._checkout()
        try:
            answer = worker.exchange(message, self.settings.call_timeout, egress)
        except (WorkerTimeout, WorkerCrashed) as error:
            logger.warning(
                "integration %s: worker %s %s",
                self.name,
                worker.pid,
                f"crashed: {error}" if isinstance(error, WorkerCrashed) else "timed out",
            )
            self._discard(worker)
            raise
        except BaseException:
            # Anything else (a bug of ours on the worker's input): the worker's state is
            # unknown; replace it rather than lose its place in the pool.
            logger.exception("integration %s: worker %s failed", self.name, worker.pid)
            self._discard(worker)
            raise
        finally:
            with self._changed:
                self._busy -= 1
                self.last_used = time.monotonic()
        if answer.get("retire") or answer.get("cpuSeconds", 0) > self.settings.cpu_seconds / 2:
            self._discard(worker)
        else:
            self._checkin(worker)
        return answer

    def idle_since(self) -> float | None:
        """When the pool was last used, or None while a call runs."""
        with self._changed:
            return None if self._busy else self.last_used

    def close(self):
        """Kill the idle workers now and the busy ones when their call ends; the bundle's
        folder goes with the last one."""
        with self._changed:
            self._closed = True
            idle, self._idle = self._idle, []
            self._changed.notify_all()
        for worker in idle:
            worker.kill()
        with self._changed:
            self._count -= len(idle)
            done = self._count == 0
        if done:
            shutil.rmtree(self.folder, ignore_errors=True)

    def _checkout(self) -> Worker:
        deadline = time.monotonic() + self.settings.queue_timeout
        with self._changed:
            self._busy += 1
            try:
                while True:
                    if self._closed:
                        raise PoolBusy
                    if self._idle:
                        return self._idle.pop()
                    if self._load_error is not None:
                        if time.monotonic() - self._load_failed_at < LOAD_ERROR_MEMORY:
                            raise self._load_error.again()
                        self._load_error = None
                    if self._count < self.settings.workers_per_version:
                        self._count += 1
                        break
                    remaining = deadline - time.monotonic()
                    if remaining <= 0:
                        raise PoolBusy
                    self._changed.wait(remaining)
            except BaseException:
                self._busy -= 1
                raise
        try:
            return self._start()
        except BaseException:
            with self._changed:
                self._busy -= 1
            raise

    def _start(self) -> Worker:
        """Start a worker whose place ``_count`` already holds."""
        try:
            return Worker(self.settings, self.name, str(self.folder), self.script)
        except BaseException as error:
            with self._changed:
                self._count -= 1
                if isinstance(error, ScriptLoadError):
                    self._load_error, self._load_failed_at = error, time.monotonic()
                self._changed.notify_all()
            raise

    def _replenish(self):
        with self._changed:
            if self._closed or self._load_error or self._count >= self.settings.workers_per_version:
                return
            self._count += 1
        try:
            self._checkin(self._start())
        except (ScriptLoadError, WorkerCrashed, WorkerTimeout, OSError) as error:
            logger.warning("integration %s: a worker failed to start: %s", self.name, error)

    def _checkin(self, worker: Worker):
        with self._changed:
            if not self._closed:
                self._idle.append(worker)
                self._changed.notify()
                return
        self._discard(worker, replace=False)

    def _discard(self, worker: Worker, replace: bool = True):
        worker.kill()
        with self._changed:
            self._count -= 1
            self._changed.notify_all()
            finished = self._closed and self._count == 0
        if finished:
            shutil.rmtree(self.folder, ignore_errors=True)
        elif replace:
            self.prestart(1)


class PoolRegistry:
    """The pools of the bundles this host serves, keyed by (integration name, the SHA-256 the
    host computed of the bundle); the least recently used one is closed beyond ``max_pools``,
    and any pool unused for ``pool_idle_seconds`` is closed by a reaper thread."""

    def __init__(self, settings: WorkerSettings, max_pools: int):
        self.settings, self.max_pools = settings, max_pools
        self._pools: OrderedDict[tuple[str, str], WorkerPool] = OrderedDict()
        self._lock = threading.Lock()
        self._stopped = threading.Event()
        self._bundles = Path(settings.sandbox.stage, "bundles")
        threading.Thread(target=self._reap, daemon=True).start()

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
            folder = self._bundles / f"{key[0]}-{key[1][:16]}-{time.monotonic_ns()}"
            folder.mkdir(mode=0o755)
            pool = self._pools[key] = WorkerPool(key[0], bundle, folder, self.settings)
            while len(self._pools) > self.max_pools:
                evicted.append(self._pools.popitem(last=False)[1])
        for old in evicted:
            old.close()
        pool.prestart(self.settings.workers_per_version - 1)
        return pool

    def __len__(self):
        with self._lock:
            return len(self._pools)

    def retire_idle(self, now: float | None = None) -> int:
        """Close the pools unused for ``pool_idle_seconds``; returns how many."""
        now = time.monotonic() if now is None else now
        retired = []
        with self._lock:
            for key, pool in list(self._pools.items()):
                since = pool.idle_since()
                if since is not None and now - since >= self.settings.pool_idle_seconds:
                    retired.append(self._pools.pop(key))
        for pool in retired:
            logger.info("integration %s: pool retired after being idle", pool.name)
            pool.close()
        return len(retired)

    def _reap(self):
        interval = max(0.5, min(30.0, self.settings.pool_idle_seconds / 4))
        while not self._stopped.wait(interval):
            self.retire_idle()

    def close(self):
        self._stopped.set()
        with self._lock:
            pools, self._pools = list(self._pools.values()), OrderedDict()
        for pool in pools:
            pool.close()
