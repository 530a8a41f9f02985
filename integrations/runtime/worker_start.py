"""How a worker process is started: its settings (the limits it runs under), and the one
thread that spawns every worker (``spawner``)."""

import queue
import subprocess
import threading
from collections.abc import Callable
from concurrent.futures import Future
from dataclasses import dataclass

from .sandbox import Sandbox

MEBIBYTE = 1024 * 1024


@dataclass(frozen=True)
class WorkerSettings:
    sandbox: Sandbox
    call_timeout: float = 10
    memory_bytes: int = 512 * MEBIBYTE
    cpu_seconds: int = 300
    processes: int = 32
    open_files: int = 256
    file_bytes: int = 64 * MEBIBYTE
    answer_bytes: int = 10 * MEBIBYTE

    def limits(self) -> dict:
        return {
            "memory_bytes": self.memory_bytes,
            "cpu_seconds": self.cpu_seconds,
            "processes": self.processes,
            "open_files": self.open_files,
            "file_bytes": self.file_bytes,
        }


#: Performs one HTTP request a worker asked for: (request, seconds left) -> the answer.
Egress = Callable[[dict, float], dict]


class Spawner:
    """Starts every worker process from one thread that lives as long as the host: the
    sandbox ends its worker when the worker's parent *thread* exits (``--die-with-parent``,
    the kernel's parent-death signal), so no short-lived request thread may be that parent."""

    def __init__(self):
        self._requests: queue.SimpleQueue = queue.SimpleQueue()
        threading.Thread(target=self._run, name="worker-spawner", daemon=True).start()

    def _run(self):
        while True:
            arguments, done = self._requests.get()
            try:
                done.set_result(subprocess.Popen(**arguments))
            except BaseException as error:  # handed to the caller
                done.set_exception(error)

    def popen(self, **arguments) -> subprocess.Popen:
        done: Future = Future()
        self._requests.put((arguments, done))
        return done.result()


spawner = Spawner()
