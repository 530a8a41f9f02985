"""What the host's workers may take in all, and who gets a freed slot.

Every worker bound to a version, alive or starting, holds one of ``max_workers`` slots and
counts its memory against ``memory_budget_bytes`` (what ``pool.PoolRegistry`` measures of it
from outside about once a second, ``process_accounts.memory_of``; a worker not measured yet
counts as ``WORKER_BYTES_ESTIMATE``). The spares (``spares.py``) hold no slot and count
against neither: they are kept ready however full the host is. When a worker is wanted and
the host is full (either cap), the least recently used idle worker of another pool is
stopped to make room; a worker whose call is waiting holds its slot. When several
integrations wait, a freed slot goes to the one holding the fewest workers; and when an
integration waits holding none, or two fewer than another, a worker of that other one is
stopped when its call ends rather than kept for its own next call.

One lock (``Capacity.lock``) guards the state of the capacity, of every pool and of the
spares: decisions that weigh them against each other see one consistent picture. Its
condition ``Capacity.changed`` is what the spares' keeper waits on; each pool's calls wait on
the pool's own condition over the same lock (``WorkerPool.available``), so a worker given back
wakes one call of its own pool rather than every waiting thread of the host (under load,
waking a dozen threads per call cost a tenth of the host's CPU). ``Capacity.notify_all``
wakes everyone, for what may change any pool's decision: a slot freed, a worker started, a
pool closed, the memory measured.
"""

import threading
from collections import Counter
from dataclasses import dataclass

MEBIBYTE = 1024 * 1024
#: What a worker holds, measured as ``process_accounts.memory_of`` does, with its code loaded
#: (a small integration's: 16.4 MiB with bubblewrap), rounded up: how many workers a memory
#: budget holds by default, and what a worker counts for until it is measured.
WORKER_BYTES_ESTIMATE = 20 * MEBIBYTE


@dataclass(frozen=True)
class PoolSettings:
    """How pools grow and shrink (the host's ``RUNTIME_*`` settings, ``config.py``)."""

    workers_min: int = 0
    workers_max: int = 4
    worker_idle_seconds: float = 60
    max_workers: int = 256
    memory_budget_bytes: int = 4096 * MEBIBYTE
    max_queued: int = 16
    spare_workers: int = 2
    queue_timeout: float = 10
    pool_idle_seconds: float = 300
    max_versions: int = 256


class Capacity:
    """The host-wide count of slots and memory; ``held`` and ``queued`` by integration."""

    def __init__(self, settings: PoolSettings):
        self.settings = settings
        self.lock = threading.RLock()
        self.changed = threading.Condition(self.lock)
        self.used = 0  # slots: workers bound to a version, alive or starting
        self.memory = 0  # bytes of those workers: measured, or estimated until measured
        self.held: Counter[str] = Counter()  # integration -> its workers alive or starting
        self.queued: Counter[str] = Counter()  # integration -> its calls waiting
        self.pools: set = set()  # the open pools (``pool.WorkerPool``)
        self.loads = 0  # workers that loaded a version's code since the host started

    # All below: with ``changed`` held.

    def has_room(self) -> bool:
        """Whether one more worker may start without stopping another."""
        return (
            self.used < self.settings.max_workers
            and self.memory < self.settings.memory_budget_bytes
        )

    def over_budget(self) -> bool:
        return self.memory > self.settings.memory_budget_bytes

    def wanting(self) -> list:
        """The pools with a call waiting that no starting worker will serve."""
        return [pool for pool in self.pools if pool.wants_worker()]

    def first_in_line(self, name: str) -> bool:
        """Whether integration ``name`` holds no more workers than any other one waiting."""
        mine = self.held[name]
        return all(self.held[pool.name] >= mine for pool in self.wanting())

    def should_yield(self, name: str) -> bool:
        """Whether a worker of ``name`` whose call ended should be stopped to give its slot
        to an integration waiting with none, or with at least two fewer."""
        if self.has_room():
            return False
        mine = self.held[name]
        return any(
            pool.name != name and (self.held[pool.name] == 0 or self.held[pool.name] + 1 < mine)
            for pool in self.wanting()
        )

    def victim(self, wanting=None):
        """The pool, other than ``wanting``, whose idle worker was used least recently (none
        of its calls waiting); or None."""
        candidates = [pool for pool in self.pools if pool is not wanting and pool.has_idle()]
        return min(candidates, key=lambda pool: pool.idle_longest(), default=None)

    def take(self, name: str, memory: int = WORKER_BYTES_ESTIMATE):
        self.used += 1
        self.memory += memory
        self.held[name] += 1

    def give_back(self, name: str, memory: int = WORKER_BYTES_ESTIMATE):
        self.used -= 1
        self.memory -= memory
        self.held[name] -= 1
        if not self.held[name]:
            del self.held[name]
        self.notify_all()

    def notify_all(self):
        """Wake the spares' keeper and every waiting call of every pool (an event loop's
        through ``woken``)."""
        self.changed.notify_all()
        for pool in self.pools:
            pool.available.notify_all()
            pool.woken()
