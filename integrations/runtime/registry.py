"""The versions a runtime host serves and their pools (``pool.py``), one per installation:
kept by least-recent use within ``max_versions``, a version's bundle forgotten with its last
pool; a thread closes what stays unused, and keeps the workers' memory within the budget."""

import logging
import threading
import time
from collections import OrderedDict
from dataclasses import dataclass, field
from pathlib import Path

from docplatform_sdk.codebundle import CodeBundle

from .call_failures import ScriptLoadError
from .capacity import Capacity, PoolSettings
from .pool import WorkerPool
from .spares import Spares
from .worker_start import WorkerSettings

logger = logging.getLogger("integrations.runtime")


@dataclass(eq=False)
class Version:
    """A version's code, as the host keeps it, and its pools by installation. Code that
    failed to load fails the same way whichever installation calls: its error is answered to
    every pool's calls for ``LOAD_ERROR_MEMORY`` seconds, without a worker started for each
    (guarded by ``capacity.lock``, as the pools are)."""

    name: str
    bundle: CodeBundle
    pools: dict[str | None, WorkerPool] = field(default_factory=dict)
    load_error: ScriptLoadError | None = None
    load_failed_at: float = 0.0


class PoolRegistry:
    """The versions this host serves, keyed by (integration name, the SHA-256 the host
    computed of the bundle), each with a pool per installation; the least recently used
    version is closed beyond ``max_versions``. A thread closes the pools unused for
    ``pool_idle_seconds`` (and forgets a version with none left), stops the workers idle for
    ``worker_idle_seconds``, measures the workers' memory and, over the budget, stops the
    least recently used idle ones."""

    def __init__(self, settings: WorkerSettings, pool_settings: PoolSettings):
        self.settings, self.pool_settings = settings, pool_settings
        self.capacity = Capacity(pool_settings)
        self.bundles = Path(settings.sandbox.stage, "bundles")
        self.spares = Spares(self.capacity, settings, self.bundles)
        self._versions: OrderedDict[tuple[str, str], Version] = OrderedDict()
        self._lock = threading.Lock()
        self._stopped = threading.Event()
        threading.Thread(target=self._maintain, name="pools", daemon=True).start()

    def get(self, key: tuple[str, str], installation: str | None) -> WorkerPool | None:
        """The pool of ``installation`` for version ``key``, or None when the host does not
        have the version's code."""
        with self._lock:
            version = self._versions.get(key)
            if version is None:
                return None
            self._versions.move_to_end(key)
            return self._pool_of(version, installation)

    def create(
        self, key: tuple[str, str], installation: str | None, bundle: CodeBundle
    ) -> WorkerPool:
        """The pool of ``installation`` for version ``key``, made from ``bundle`` when the
        host does not have the version yet."""
        evicted = []
        with self._lock:
            version = self._versions.get(key)
            if version is None:
                version = self._versions[key] = Version(key[0], bundle)
                while len(self._versions) > self.pool_settings.max_versions:
                    evicted += self._versions.popitem(last=False)[1].pools.values()
            else:
                self._versions.move_to_end(key)
            pool = self._pool_of(version, installation)
        for old in evicted:
            old.close()
        return pool

    def _pool_of(self, version: Version, installation: str | None) -> WorkerPool:
        pool = version.pools.get(installation)
        if pool is None:
            pool = version.pools[installation] = WorkerPool(version, self)
        pool.last_used = time.monotonic()
        return pool

    def __len__(self):
        with self._lock:
            return len(self._versions)

    def workers(self) -> dict:
        """The workers of each version (alive or starting), as ``{"pools": [{"integration",
        "bundle" (its SHA-256's first 12 digits), "installations" (its pools), "workers",
        "busy"}], "spares": n, "loads": n}``; ``loads``: how many workers have loaded a
        version's code since the host started (each call that found no worker free)."""
        with self._lock:
            versions = [
                (key, list(version.pools.values())) for key, version in self._versions.items()
            ]
        with self.capacity.changed:
            return {
                "pools": [
                    {
                        "integration": name,
                        "bundle": digest[:12],
                        "installations": len(pools),
                        "workers": sum(pool.count for pool in pools),
                        "busy": sum(pool._busy for pool in pools),
                    }
                    for (name, digest), pools in versions
                ],
                "spares": len(self.spares.slots),
                "loads": self.capacity.loads,
            }

    def retire_idle(self, now: float | None = None) -> int:
        """Close the pools unused for ``pool_idle_seconds`` (forgetting the versions left with
        none) and stop the workers idle for ``worker_idle_seconds``; returns how many pools
        were closed."""
        now = time.monotonic() if now is None else now
        retired, stopped = [], []
        with self._lock, self.capacity.changed:
            for key, version in list(self._versions.items()):
                for installation, pool in list(version.pools.items()):
                    since = pool.idle_since()
                    if since is not None and now - since >= self.pool_settings.pool_idle_seconds:
                        retired.append(version.pools.pop(installation))
                    else:
                        stopped += pool.shrink(now)
                if not version.pools:
                    del self._versions[key]
        for pool in retired:
            logger.info("integration %s: pool retired after being idle", pool.name)
            pool.close()
        for slot in stopped:
            slot.stop()
        return len(retired)

    def measure(self):
        """Measure what each worker bound to a version holds of the host's memory; over the
        budget, stop the least recently used idle workers until it is not."""
        with self.capacity.changed:
            slots = [slot for pool in self.capacity.pools for slot in pool.slots]
        measured = [(slot, slot.worker.memory()) for slot in slots]
        stopped = []
        with self.capacity.changed:
            capacity = self.capacity
            bound = {slot for pool in capacity.pools for slot in pool.slots}
            for slot, memory in measured:
                if slot in bound:  # not stopped meanwhile
                    capacity.memory += memory - slot.memory
                    slot.memory = memory
            while capacity.over_budget() and (victim := capacity.victim()) is not None:
                stopped.append(victim._evict())
            capacity.notify_all()
        for slot in stopped:
            logger.info(
                "worker %s stopped: the workers' memory is over the budget", slot.worker.pid
            )
            slot.stop()

    def _maintain(self):
        limits = self.pool_settings
        interval = max(0.1, min(1.0, limits.worker_idle_seconds / 4, limits.pool_idle_seconds / 4))
        while not self._stopped.wait(interval):
            self.retire_idle()
            self.measure()

    def close(self):
        self._stopped.set()
        with self._lock:
            versions, self._versions = list(self._versions.values()), OrderedDict()
        for version in versions:
            for pool in version.pools.values():
                pool.close()
        self.spares.close()
