"""What a worker's sandbox holds and has spent, read by the host from ``/proc``: never what
the worker says (its code could say anything).

A worker's sandbox is the process the host started (bubblewrap) and every process below it:
a process whose parent dies is adopted by the sandbox's first process, so nothing the code
starts leaves the tree. ``IdleWatch`` stops a worker that keeps using CPU between calls
(work its code left running: a thread, a process, a signal handler). ``memory_of`` is what a
worker holds of the host's memory; ``exhausted`` says which of its limits a worker has all
but run out of.
"""

import contextlib
import os
import resource
import threading
import time
import weakref
from collections import deque
from dataclasses import dataclass

CLOCK_TICKS = os.sysconf("SC_CLK_TCK")
MEBIBYTE = 1024 * 1024
#: An idle worker using more CPU than this over ``IDLE_WINDOW`` seconds is stopped.
IDLE_CPU_SECONDS = 0.1
IDLE_WINDOW = 1.0
IDLE_TICK = 0.5
#: A worker that holds this share of its open files, address space or ``/tmp`` after a call
#: is replaced before its next call, which would fail for want of them.
EXHAUSTED_SHARE = 0.9
PAGE_BYTES = os.sysconf("SC_PAGE_SIZE")
#: Bytes read at a time from a ``/proc`` file.
PROC_READ = 4096


@dataclass(frozen=True)
class Usage:
    """A sandbox's processes and threads now, and the CPU seconds it has used in all (its
    live processes' and those they reaped); the largest address space of its processes (the
    interpreter's, unless one it started grew larger), in bytes."""

    processes: int
    threads: int
    cpu_seconds: float
    address_space: int = 0

    def exceeds(self, baseline: "Usage") -> bool:
        return self.processes > baseline.processes or self.threads > baseline.threads


def read_usage(roots: list[int], files: "ProcFiles | None" = None) -> dict[int, Usage]:
    """The usage of the trees below each of ``roots``, walked down each thread's
    ``children`` file (a few small reads per worker, not a scan of ``/proc``: this runs after
    every call; ``files``: one worker's, kept open); a root that is gone is missing from
    the answer."""
    read = files.read if files is not None else _read_path
    usages = {}
    for root in roots:
        processes, threads, ticks, address_space = 0, 0, 0, 0
        pending = [root]
        while pending:
            pid = pending.pop()
            try:
                # After the command's name (which may hold anything): state, ppid, ...; the
                # CPU ticks are fields 11 to 14 of these (utime, stime, cutime, cstime)
                fields = read(pid, "stat").rpartition(b")")[2].split()
                below = children_of(pid, int(fields[17]), files)
            except OSError:  # gone meanwhile
                if pid == root:
                    break
                continue
            processes += 1
            threads += int(fields[17])
            ticks += int(fields[11]) + int(fields[12]) + int(fields[13]) + int(fields[14])
            address_space = max(address_space, int(fields[20]))  # vsize
            pending += below
        else:
            usages[root] = Usage(processes, threads, ticks / CLOCK_TICKS, address_space)
    return usages


def _whole(descriptor: int) -> bytes:
    """A small ``/proc`` file whole, from its start, without Python's buffered file objects
    (a third of the cost of ``open``, on the path of every call). These files fill each read
    as far as they go, so one that comes short is the whole of what is left."""
    chunks = [os.pread(descriptor, PROC_READ, 0)]
    while len(chunks[-1]) == PROC_READ:
        chunks.append(os.pread(descriptor, PROC_READ, PROC_READ * len(chunks)))
    return b"".join(chunks)


def _read_path(pid: int, name: str) -> bytes:
    """``/proc/{pid}/{name}``, opened, read whole and closed."""
    descriptor = os.open(f"/proc/{pid}/{name}", os.O_RDONLY)
    try:
        return _whole(descriptor)
    finally:
        os.close(descriptor)


def kept_files_budget() -> int:
    """How many ``/proc`` files all of this process's ``ProcFiles`` keep open at most: an
    eighth of its open files' limit (``config.default_max_workers`` leaves it to them)."""
    soft = resource.getrlimit(resource.RLIMIT_NOFILE)[0]
    return 4096 if soft == resource.RLIM_INFINITY else soft // 8


class ProcFiles:
    """The ``/proc`` files of one worker's processes, kept open and read again from their
    start: after each call the accounts cost one read per file instead of an open, a read
    and a close. A descriptor keeps naming the process it was opened for; once that process
    is reaped its ``stat`` reads ESRCH, and every file of its pid is opened anew (another
    process may have the pid now: ``stat`` is read first, before its ``children``). At most
    ``KEPT`` files (a sandbox namespace's two processes and one its code starts, two files
    each), and none beyond the host's ``kept_files_budget``: the others are read by their
    path. Closed with its worker."""

    KEPT = 6
    #: The files every worker's ``ProcFiles`` keep open now, and the most they may.
    _host_kept = 0
    _host_budget = kept_files_budget()
    _host_lock = threading.Lock()

    def __init__(self):
        self._open: dict[int, dict[str, int]] = {}
        self._lock = threading.Lock()
        self._closed = False

    def read(self, pid: int, name: str) -> bytes:
        with self._lock:
            kept = self._open.get(pid)
            descriptor = kept.get(name) if kept else None
            if descriptor is not None:
                try:
                    return _whole(descriptor)
                except ProcessLookupError:  # reaped: its pid may be another process's now
                    self._forget(pid)
            kept_now = sum(len(files) for files in self._open.values())
            if self._closed or kept_now >= self.KEPT or not self._take_one():
                return _read_path(pid, name)
            try:
                descriptor = os.open(f"/proc/{pid}/{name}", os.O_RDONLY)
                try:
                    data = _whole(descriptor)
                except BaseException:
                    os.close(descriptor)
                    raise
            except BaseException:
                self._give_back(1)
                raise
            self._open.setdefault(pid, {})[name] = descriptor
            return data

    @classmethod
    def _take_one(cls) -> bool:
        with cls._host_lock:
            if cls._host_kept >= cls._host_budget:
                return False
            cls._host_kept += 1
            return True

    @classmethod
    def _give_back(cls, count: int):
        with cls._host_lock:
            cls._host_kept -= count

    def _forget(self, pid: int):
        descriptors = self._open.pop(pid, {}).values()
        for descriptor in descriptors:
            os.close(descriptor)
        self._give_back(len(descriptors))

    def close(self):
        with self._lock:
            self._closed = True
            for pid in list(self._open):
                self._forget(pid)


def children_of(pid: int, threads: int = 0, files: ProcFiles | None = None) -> list[int]:
    """The processes whose parent is ``pid`` (any of its threads). ``threads``: 1 when the
    caller has just read that it has one thread, whose ``children`` file is then read without
    listing ``task`` (a thread started after that read escapes a listing as well; between
    calls, ``IdleWatch`` sees what a worker does)."""
    read = files.read if files is not None else _read_path
    tasks = [pid] if threads == 1 else os.listdir(f"/proc/{pid}/task")
    found = []
    for thread in tasks:
        # a thread that ended meanwhile has no file
        with contextlib.suppress(FileNotFoundError):
            found += [int(child) for child in read(pid, f"task/{thread}/children").split()]
    return found


def usage_of(root: int, files: ProcFiles | None = None) -> Usage | None:
    return read_usage([root], files).get(root)


def innermost(root: int) -> int:
    """The last process of the chain that starts at ``root``: a sandbox's interpreter (below
    bubblewrap's two processes, or unshare's), or ``root`` itself when nothing is below."""
    pid = root
    with contextlib.suppress(OSError):
        while len(below := children_of(pid)) == 1:
            pid = below[0]
    return pid


def namespace_init(sandbox: int) -> int:
    """The first process of the process namespace the sandbox started as ``sandbox`` made
    (bubblewrap's second process, or the command unshare forked): the only child of
    ``sandbox``, and the parent every orphan of the namespace is given, so its tree holds
    every process of the worker but the sandbox's first (which runs none of its code);
    ``sandbox`` itself when it has no child (gone meanwhile)."""
    with contextlib.suppress(OSError):
        below = children_of(sandbox)
        if len(below) == 1:
            return below[0]
    return sandbox


def memory_of(root: int, private_tmp: str | None) -> int:
    """What a worker holds of the host's memory: the anonymous resident memory of the
    processes below ``root`` (``statm``'s resident less its file-backed pages, which the
    page cache shares between workers: the interpreter's and the SDK's files), and what its
    private ``/tmp`` (a tmpfs, in memory) holds; 0 when it is gone. A few small reads per
    worker; ``smaps_rollup``'s proportional size would cost about eight times as much."""
    total, pending = 0, [root]
    while pending:
        pid = pending.pop()
        try:
            with open(f"/proc/{pid}/statm", "rb") as handle:
                resident, shared = handle.read().split()[1:3]
            pending += children_of(pid)
        except (OSError, ValueError):  # gone meanwhile
            continue
        total += (int(resident) - int(shared)) * PAGE_BYTES
    if private_tmp is not None:
        total += _tmp_used(private_tmp)
    return total


def _tmp_used(path: str) -> int:
    """The bytes used of the filesystem at ``path`` (0 when unreadable)."""
    try:
        stats = os.statvfs(path)
    except OSError:
        return 0
    return (stats.f_blocks - stats.f_bfree) * stats.f_frsize


def open_files(pid: int) -> int:
    """How many files process ``pid`` holds open (0 when it is gone)."""
    try:
        count = os.stat(f"/proc/{pid}/fd").st_size  # the count, on Linux 6.2 and later
        return count or len(os.listdir(f"/proc/{pid}/fd"))
    except OSError:
        return 0


def exhausted(
    interpreter: int, usage: Usage, limits: dict, private_tmp: str | None, tmp_bytes: int
) -> str | None:
    """Which of its limits the worker whose interpreter is process ``interpreter`` and whose
    sandbox's ``usage`` was just read holds ``EXHAUSTED_SHARE`` of (``limits``: its
    ``open_files`` and ``memory_bytes``, which limits each process's address space; its
    private ``/tmp``, of ``tmp_bytes``, when it has one), said as a reason to replace it; or
    None."""
    held = open_files(interpreter)
    if held >= limits["open_files"] * EXHAUSTED_SHARE:
        return f"it holds {held} open files of its {limits['open_files']}"
    size = usage.address_space
    if size >= limits["memory_bytes"] * EXHAUSTED_SHARE:
        limit = limits["memory_bytes"] // MEBIBYTE
        return f"its address space is {size // MEBIBYTE} MiB of its {limit}"
    if private_tmp is not None:
        used = _tmp_used(private_tmp)
        if used >= tmp_bytes * EXHAUSTED_SHARE:
            return f"its /tmp holds {used // MEBIBYTE} MiB of its {tmp_bytes // MEBIBYTE}"
    return None


class IdleWatch:
    """Every ``IDLE_TICK`` seconds, reads the CPU time of the idle workers it watches and
    stops (``worker.stop_idle(reason)``) those that used over ``IDLE_CPU_SECONDS`` in the last
    ``IDLE_WINDOW``. A worker tells whether it is idle (``worker.idle()``), how many calls it
    has served (``worker.calls``: the CPU time of a call between two readings is not idle's)
    and the root of its processes' tree (``worker.accounted``)."""

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
        usages = read_usage([worker.accounted for worker in idle])
        now = time.monotonic()
        for worker in idle:
            usage = usages.get(worker.accounted)
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
