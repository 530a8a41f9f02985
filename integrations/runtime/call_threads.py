"""The threads the frame server (``socket_server``) runs its calls on.

A call is handed to a thread that waits for one: a put on a queue and one wake-up. Started as
calls come, up to a cap, and kept. ``concurrent.futures.ThreadPoolExecutor`` did the same with
a future per call and a semaphore of idle threads written in Python, taken and given back
around each call: under load, a tenth of the runtime host's Python time.
"""

import logging
import queue
import threading
from collections.abc import Callable

logger = logging.getLogger("integrations.runtime")


class CallThreads:
    """At most ``most`` threads named ``name-N``; a call handed over while all are busy waits
    in the queue for the first one free."""

    def __init__(self, most: int, name: str):
        self._most, self._name = most, name
        self._calls: queue.SimpleQueue = queue.SimpleQueue()
        self._lock = threading.Lock()
        self._started = 0
        # The threads waiting for a call, less the calls queued for none (below 0 only when
        # all ``most`` are busy).
        self._idle = 0

    def submit(self, function: Callable, *arguments) -> None:
        """Run ``function(*arguments)`` on a thread; what it raises is logged."""
        with self._lock:
            start = self._idle <= 0 and self._started < self._most
            if start:
                self._started += 1
            else:
                self._idle -= 1
        self._calls.put((function, arguments))
        if start:
            name = f"{self._name}-{self._started}"
            threading.Thread(target=self._serve, name=name, daemon=True).start()

    def _serve(self) -> None:
        while True:
            function, arguments = self._calls.get()
            try:
                function(*arguments)
            except Exception:
                logger.exception("runtime host: a call's thread failed")
            with self._lock:
                self._idle += 1
