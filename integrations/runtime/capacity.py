"""What the host's workers may take in all, and who gets a freed slot.

Every worker alive or starting, spares included, holds one of ``max_workers`` slots; no
worker starts while the workers' resident memory (the sum of ``VmRSS`` over each worker's
process tree, read from ``/proc`` about once a second) is at ``max_memory_bytes``. When
the host is full, a freed slot goes to the integration holding the fewest workers among
those with a call waiting; an idle worker of another pool (none of its calls waiting) is
stopped to make room; and when an integration waits holding none, or two fewer than
another, a worker of that other one is stopped when its call ends rather than kept for its
own next call.

One condition (``Capacity.changed``) guards the state of the capacity, of every pool and
of the spares: decisions that weigh them against each other see one consistent picture.
"""

import contextlib
import os
import threading
from collections import Counter
from dataclasses import dataclass

MEBIBYTE = 1024 * 1024


@dataclass(frozen=True)
class PoolSettings:
    """How pools grow and shrink (the host's ``RUNTIME_*`` settings, ``host.py``)."""

    workers_min: int = 0
    workers_max: int = 4
    worker_idle_seconds: float = 60
    max_workers: int = 16
    max_memory_bytes: int = 4096 * MEBIBYTE
    max_queued: int = 16
    spare_workers: int = 2
    queue_timeout: float = 10
    pool_idle_seconds: float = 300
    max_pools: int = 64


class Capacity:
    """The host-wide count of slots and memory; ``held`` and ``queued`` by integration."""

    def __init__(self, settings: PoolSettings):
        self.settings = settings
        self.changed = threading.Condition()
        self.used = 0  # slots: workers alive or starting, spares included
        self.memory = 0  # bytes, last sampled
        self.held: Counter[str] = Counter()  # integration -> its workers alive or starting
        self.queued: Counter[str] = Counter()  # integration -> its calls waiting
        self.pools: set = set()  # the open pools (``pool.WorkerPool``)

    # All below: with ``changed`` held.

    def has_room(self) -> bool:
        """Whether one more worker may start."""
        return (
            self.used < self.settings.max_workers and self.memory < self.settings.max_memory_bytes
        )

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

    def victim(self, wanting):
        """Another pool with an idle worker to stop for pool ``wanting``, of the integration
        holding the most workers; or None."""
        candidates = [pool for pool in self.pools if pool is not wanting and pool.has_idle()]
        return max(candidates, key=lambda pool: self.held[pool.name], default=None)

    def take(self, name: str, count: int = 1):
        self.used += count
        self.held[name] += count

    def give_back(self, name: str, count: int = 1):
        self.used -= count
        self.held[name] -= count
        if not self.held[name]:
            del self.held[name]
        self.changed.notify_all()


def resident_bytes(pid: int) -> int:
    """The resident memory of process ``pid`` and its descendants (0 when gone)."""
    total, pending = 0, [pid]
    while pending:
        current = pending.pop()
        with contextlib.suppress(OSError, ValueError):
            with open(f"/proc/{current}/status", encoding="ascii", errors="replace") as status:
                for line in status:
                    if line.startswith("VmRSS:"):
                        total += int(line.split()[1]) * 1024
                        break
            for task in os.listdir(f"/proc/{current}/task"):
                with open(f"/proc/{current}/task/{task}/children", encoding="ascii") as children:
                    pending += [int(child) for child in children.read().split()]
    return total
