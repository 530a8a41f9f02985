"""What a request leaves for later (``call_log.later``: a component's markup kept in the
cache for the renders that follow), done by a thread of the web process once the answer is
sent, not by the request's own thread.

Done by the request's thread after its answer (as response closers are), it still held up
the next request on the same keep-alive connection: a server thread hands the connection
back to its poller only once the response is closed. A component action paid a round trip
to the cache for it, 0.30 ms of its 4 ms in the web process (``benchmarks/RESULTS.md``,
"Issue 35, session 26"). The work is only ever a keep for later requests, never what an
answer depends on: a render that comes before it is done calls the runtime as if nothing
were kept.

With ``RUNTIME_AFTER_ANSWER_THREAD`` on (the default) on PostgreSQL; off, or on SQLite (one
writer at a time, and the embedded default's cache is its database), the request's thread
does it after its answer, as before. A task that fails is logged and the next one runs; past
``MOST_WAITING`` batches waiting (a cache that stopped answering, its every write waiting
out its timeout), more is dropped, not queued: it only keeps what can be made again. A
forked child starts with nothing of its parent's.
"""

import logging
import os
import queue
import threading
from collections.abc import Callable

from django.conf import settings
from django.db import connection

from docplatform.queries import is_postgresql

logger = logging.getLogger(__name__)

#: Requests' batches of work waiting at most; more is dropped.
MOST_WAITING = 1000


def hands_off() -> bool:
    """Whether this process's later work goes to its thread (module docstring)."""
    return settings.RUNTIME_AFTER_ANSWER_THREAD and is_postgresql()


class LaterWork:
    def __init__(self):
        self._lock = threading.Lock()
        self._waiting: queue.SimpleQueue = queue.SimpleQueue()
        self._thread: threading.Thread | None = None
        self._dropping = False  # warned of the drops since the queue last had room

    def add(self, tasks: list[Callable[[], object]]) -> None:
        """Hand a request's tasks to the thread (started at the first); dropped when too
        many wait."""
        if self._waiting.qsize() >= MOST_WAITING:
            if not self._dropping:  # once until there is room again, not once a request
                self._dropping = True
                logger.warning(
                    "later work dropped: %d requests' work already waiting", MOST_WAITING
                )
            return
        self._dropping = False
        with self._lock:
            if self._thread is None or not self._thread.is_alive():
                self._thread = threading.Thread(target=self._run, name="later work", daemon=True)
                self._thread.start()
        self._waiting.put(tasks)

    def _run(self) -> None:
        while True:
            run_all(self._waiting.get())
            # The thread's own database connection (a database cache's), as a request's end
            # would: one broken or past its age is not kept for the next task.
            connection.close_if_unusable_or_obsolete()

    def forget(self) -> None:
        """In a forked child: the parent's waiting work and thread are the parent's."""
        self._lock = threading.Lock()
        self._waiting, self._thread = queue.SimpleQueue(), None


def run_all(tasks: list[Callable[[], object]]) -> None:
    """Each task in turn; one that fails is logged, the next runs."""
    for task in tasks:
        try:
            task()
        except Exception:
            logger.exception("later work failed")


later_work = LaterWork()
os.register_at_fork(after_in_child=later_work.forget)
