"""What a worker's sandbox holds and has spent, read by the host from ``/proc``: never what
the worker says (its code could say anything).

A worker's sandbox is the process the host started (bubblewrap) and every process below it:
a process whose parent dies is adopted by the sandbox's first process, so nothing the code
starts leaves the tree. ``IdleWatch`` stops a worker that keeps using CPU between calls
(work its code left running: a thread, a process, a signal handler).
"""

import contextlib
import os
import threading
import time
import weakref
from collections import deque
from dataclasses import dataclass

CLOCK_TICKS = os.sysconf("SC_CLK_TCK")
#: An idle worker using more CPU than this over ``IDLE_WINDOW`` seconds is stopped.
IDLE_CPU_SECONDS = 0.1
IDLE_WINDOW = 1.0
IDLE_TICK = 0.5


@dataclass(frozen=True)
class Usage:
    """A sandbox's processes and threads now, and the CPU seconds it has used in all (its
    live processes' and those they reaped)."""

    processes: int
    threads: int
    cpu_seconds: float

    def exceeds(self, baseline: "Usage") -> bool:
        return self.processes > baseline.processes or self.threads > baseline.threads


def read_usage(roots: list[int]) -> dict[int, Usage]:
    """The usage of the trees below each of ``roots``, walked down each thread's
    ``children`` file (a few small reads per worker, not a scan of ``/proc``: this runs after
    every call); a root that is gone is missing from the answer."""
    usages = {}
    for root in roots:
        processes, threads, ticks = 0, 0, 0
        pending = [root]
        while pending:
            pid = pending.pop()
            try:
                with open(f"/proc/{pid}/stat", "rb") as handle:
                    # After the command's name (which may hold anything): state, ppid, ...
                    fields = handle.read().rpartition(b")")[2].split()
                below = _children(pid)
            except OSError:  # gone meanwhile
                if pid == root:
                    break
                continue
            processes += 1
            threads += int(fields[17])
            ticks += sum(int(value) for value in fields[11:15])  # utime stime cutime cstime
            pending += below
        else:
            usages[root] = Usage(processes, threads, ticks / CLOCK_TICKS)
    return usages


def _children(pid: int) -> list[int]:
    """The processes whose parent is ``pid`` (any of its threads)."""
    found = []
    for thread in os.listdir(f"/proc/{pid}/task"):
        path = f"/proc/{pid}/task/{thread}/children"
        # a thread that ended meanwhile has no file
        with contextlib.suppress(FileNotFoundError), open(path, "rb") as handle:
            found += [int(child) for child in handle.read().split()]
    return found


def usage_of(root: int) -> Usage | None:
    return read_usage([root]).get(root)


class IdleWatch:
    """Every ``IDLE_TICK`` seconds, reads the CPU time of the idle workers it watches and
        stops (``worker.stop_idle(reason)``) those that used over ``IDLE_CPU_SECONDS`` in the last
        ``IDLE_WINDOW``. A worker tells whether it is idle (``worker.idle()``) and how many calls it
    has served (``worker.calls``): the CPU time of a call between two readings is not idle's."""

    def __init__(self):
        self._workers: weakref.WeakSet = weakref.WeakSet()
        self._samples: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
        self._lock = threading.Lock()
        self._thread: threading.Thread | None = None

    def watch(self, worker):
        with self._lock:
            self._workers.add(worker)
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name="idle-watch", daemon=True)
                self._thread.start()

    def forget(self, worker):
        with self._lock:
            self._workers.discard(worker)

    def _run(self):
        while True:
            time.sleep(IDLE_TICK)
            with contextlib.suppress(Exception):  # never let the watch die
                self.check()

    def check(self):
        with self._lock:
            workers = list(self._workers)
        idle = [worker for worker in workers if worker.idle()]
        for worker in workers:
            if worker not in idle:
                self._samples.pop(worker, None)
        usages = read_usage([worker.pid for worker in idle])
        now = time.monotonic()
        for worker in idle:
            usage = usages.get(worker.pid)
            if usage is None:
                continue
            samples = self._samples.setdefault(worker, deque())
            if samples and samples[-1][2] != worker.calls:  # it served a call meanwhile
                samples.clear()
            samples.append((now, usage.cpu_seconds, worker.calls))
            while len(samples) > 1 and now - samples[1][0] >= IDLE_WINDOW:
                samples.popleft()
            if usage.cpu_seconds - samples[0][1] > IDLE_CPU_SECONDS:
                self._samples.pop(worker, None)
                worker.stop_idle("it kept using CPU between calls")


idle_watch = IdleWatch()
