"""Pools of pre-started worker processes, one pool per integration version (host side).

A worker is a fresh interpreter (``python -I -S``: no site hooks, no user paths, no PYTHON*
variables) started with only PATH, LANG and TZ of the host's environment, in an empty
temporary directory, with an import path holding the standard library, the installed
packages and a copy of the SDK, but not the platform. It loads one script and serves one call
at a time; a call over its time limit, a crash or a garbled answer kills its process group
and a replacement is started in the background.
"""

import contextlib
import json
import logging
import os
import select
import shutil
import signal
import subprocess
import sys
import sysconfig
import tempfile
import threading
import time
from collections import OrderedDict
from dataclasses import dataclass
from pathlib import Path

logger = logging.getLogger("integrations.runtime")

INHERITED_ENVIRONMENT = ("PATH", "LANG", "TZ")
STARTUP_SECONDS = 10
# A script that failed to load is not started again for this long (its import may have
# depended on something passing, such as the network).
LOAD_ERROR_MEMORY = 30
ANSWER_LIMIT = 64 * 1024 * 1024
READ_CHUNK = 256 * 1024
BOOTSTRAP = """\
import json, sys
settings = json.loads(sys.argv[1])
sys.path[:0] = [settings["sdk_path"]]
sys.path.extend(settings["site_packages"])
from integrations.runtime.worker import main
main(settings)
"""


@dataclass(frozen=True)
class WorkerSettings:
    sdk_path: str
    workers_per_version: int = 2
    call_timeout: float = 10
    queue_timeout: float = 10
    memory_bytes: int = 512 * 1024 * 1024
    cpu_seconds: int = 300


class WorkerCrashed(Exception):
    """The worker died or garbled its answer."""


class WorkerTimeout(Exception):
    """The worker did not answer within the time limit."""


class ScriptLoadError(Exception):
    """The script failed to load; the message is its exception, without the stack."""


class PoolBusy(Exception):
    """No worker of the version became free in time."""


def prepare_sdk_path() -> str:
    """A temporary import root that holds ``integrations.runtime`` and nothing else of ours."""
    root = Path(tempfile.mkdtemp(prefix="integration-sdk-"))
    package = root / "integrations"
    package.mkdir()
    (package / "__init__.py").write_text('"""Only the runtime SDK, for integration code."""\n')
    shutil.copytree(
        Path(__file__).parent, package / "runtime", ignore=shutil.ignore_patterns("__pycache__")
    )
    return str(root)


def _site_packages() -> list[str]:
    paths = [sysconfig.get_path("purelib"), sysconfig.get_path("platlib")]
    return list(dict.fromkeys(paths))


class Worker:
    """One worker process and the host's end of its pipes."""

    def __init__(self, settings: WorkerSettings, name: str, source: str):
        self.workdir = tempfile.mkdtemp(prefix="integration-worker-")
        worker_settings = {
            "sdk_path": settings.sdk_path,
            "site_packages": _site_packages(),
            "memory_bytes": settings.memory_bytes,
            "cpu_seconds": settings.cpu_seconds,
        }
        try:
            self.process = subprocess.Popen(  # noqa: S603 - our own interpreter and bootstrap
                [sys.executable, "-I", "-S", "-c", BOOTSTRAP, json.dumps(worker_settings)],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                cwd=self.workdir,
                env={key: os.environ[key] for key in INHERITED_ENVIRONMENT if key in os.environ},
                start_new_session=True,
            )
        except OSError:
            shutil.rmtree(self.workdir, ignore_errors=True)
            raise
        self.pid = self.process.pid
        self._input = self.process.stdin.fileno()
        self._output = self.process.stdout.fileno()
        os.set_blocking(self._input, False)
        self._pending = bytearray()
        try:
            loaded = self.exchange(
                {"load": {"name": name, "source": source}},
                settings.call_timeout + STARTUP_SECONDS,
            )
        except BaseException:
            self.kill()
            raise
        if not loaded.get("loaded"):
            self.kill()
            raise ScriptLoadError(loaded.get("message") or "the script did not load")

    def exchange(self, message: dict, timeout: float) -> dict:
        """Send one message and wait for the answer, at most ``timeout`` seconds in all."""
        deadline = time.monotonic() + timeout
        self._send(json.dumps(message).encode() + b"\n", deadline)
        return self._receive(deadline)

    def _wait(self, deadline: float, reading: bool):
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            raise WorkerTimeout
        fd = self._output if reading else self._input
        ready = select.select([fd] if reading else [], [] if reading else [fd], [], remaining)
        if not any(ready):
            raise WorkerTimeout

    def _send(self, data: bytes, deadline: float):
        view = memoryview(data)
        while view:
            self._wait(deadline, reading=False)
            try:
                view = view[os.write(self._input, view) :]
            except BlockingIOError:
                continue
            except OSError as error:
                raise WorkerCrashed("the worker closed its input") from error

    def _receive(self, deadline: float) -> dict:
        while b"\n" not in self._pending:
            self._wait(deadline, reading=True)
            chunk = os.read(self._output, READ_CHUNK)
            if not chunk:
                raise WorkerCrashed(f"the worker exited ({self.process.poll()})")
            self._pending += chunk
            if len(self._pending) > ANSWER_LIMIT:
                raise WorkerCrashed("the worker's answer is over the size limit")
        line, _, rest = bytes(self._pending).partition(b"\n")
        self._pending = bytearray(rest)
        try:
            answer = json.loads(line)
        except ValueError as error:
            raise WorkerCrashed("the worker's answer is not JSON") from error
        if not isinstance(answer, dict):
            raise WorkerCrashed("the worker's answer is not an object")
        return answer

    def kill(self):
        """Kill the worker and anything it started; remove its directory."""
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.pid, signal.SIGKILL)
        self.process.wait()
        self.process.stdin.close()
        self.process.stdout.close()
        shutil.rmtree(self.workdir, ignore_errors=True)


class WorkerPool:
    """The workers of one integration version: up to ``workers_per_version``, each serving one
    call at a time; calls wait at most ``queue_timeout`` for a free one."""

    def __init__(self, name: str, source: str, settings: WorkerSettings):
        self.name, self.source, self.settings = name, source, settings
        self._idle: list[Worker] = []
        self._count = 0  # workers alive or starting
        self._closed = False
        self._load_error: str | None = None  # the script's failure, repeated for a while
        self._load_failed_at = 0.0
        self._changed = threading.Condition()

    def prestart(self, count: int):
        """Start ``count`` workers in the background."""
        for _ in range(count):
            threading.Thread(target=self._replenish, daemon=True).start()

    def call(self, message: dict) -> dict:
        """Run one call on a free worker. Raises ScriptLoadError, PoolBusy, WorkerTimeout or
        WorkerCrashed; in the last two cases the worker is replaced."""
        worker = self._checkout()
        try:
            answer = worker.exchange(message, self.settings.call_timeout)
        except (WorkerTimeout, WorkerCrashed):
            self._discard(worker)
            raise
        if answer.get("retire") or answer.get("cpuSeconds", 0) > self.settings.cpu_seconds / 2:
            self._discard(worker)
        else:
            self._checkin(worker)
        return answer

    def close(self):
        """Kill the idle workers now and the busy ones when their call ends."""
        with self._changed:
            self._closed = True
            idle, self._idle = self._idle, []
            self._changed.notify_all()
        for worker in idle:
            worker.kill()

    def _checkout(self) -> Worker:
        deadline = time.monotonic() + self.settings.queue_timeout
        with self._changed:
            while True:
                if self._idle:
                    return self._idle.pop()
                if self._load_error is not None:
                    if time.monotonic() - self._load_failed_at < LOAD_ERROR_MEMORY:
                        raise ScriptLoadError(self._load_error)
                    self._load_error = None
                if self._count < self.settings.workers_per_version:
                    self._count += 1
                    break
                remaining = deadline - time.monotonic()
                if remaining <= 0 or self._closed:
                    raise PoolBusy
                self._changed.wait(remaining)
        return self._start()

    def _start(self) -> Worker:
        """Start a worker whose place ``_count`` already holds."""
        try:
            return Worker(self.settings, self.name, self.source)
        except BaseException as error:
            with self._changed:
                self._count -= 1
                if isinstance(error, ScriptLoadError):
                    self._load_error, self._load_failed_at = str(error), time.monotonic()
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
            self._count -= 1
        worker.kill()

    def _discard(self, worker: Worker):
        worker.kill()
        with self._changed:
            self._count -= 1
            self._changed.notify_all()
        self.prestart(1)


class PoolRegistry:
    """The pools of the integration versions this host serves, keyed by (name, contentHash);
    the least recently used one is closed beyond ``max_pools``."""

    def __init__(self, settings: WorkerSettings, max_pools: int):
        self.settings, self.max_pools = settings, max_pools
        self._pools: OrderedDict[tuple[str, str], WorkerPool] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key: tuple[str, str]) -> WorkerPool | None:
        with self._lock:
            pool = self._pools.get(key)
            if pool is not None:
                self._pools.move_to_end(key)
            return pool

    def create(self, key: tuple[str, str], source: str) -> WorkerPool:
        """The pool of ``key``, made from ``source`` when there is none yet."""
        evicted = []
        with self._lock:
            pool = self._pools.get(key)
            if pool is not None:
                return pool
            pool = self._pools[key] = WorkerPool(key[0], source, self.settings)
            while len(self._pools) > self.max_pools:
                evicted.append(self._pools.popitem(last=False)[1])
        for old in evicted:
            old.close()
        pool.prestart(self.settings.workers_per_version - 1)
        return pool

    def close(self):
        with self._lock:
            pools, self._pools = list(self._pools.values()), OrderedDict()
        for pool in pools:
            pool.close()
