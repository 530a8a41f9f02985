"""Work a call leaves for after its answer is sent: the host's accounts of the worker that
served it (``pool.py``: whether it must be replaced, read from ``/proc``), which the caller
need not wait for. The worker is not given another call before they are done.

A transport holds the work of the request it serves (``held``) and runs it once the answer
is on its way (``run``): the frame server after handing the answer frame to its event loop,
the WSGI application when the server closes the response. Outside ``held`` (a call made
by the host itself, a test's), ``defer`` runs the work at once. The frame server's event loop,
which never waits, does what can be done without waiting (a work's ``without_waiting()``)
and hands the rest to a thread (``run_without_waiting``).
"""

import contextlib
import logging
import threading
from collections.abc import Callable, Iterator

logger = logging.getLogger("integrations.runtime")

_local = threading.local()


def defer(work: Callable[[], None]) -> None:
    """Run ``work`` after the answer of the request this thread serves, or now."""
    held = getattr(_local, "held", None)
    if held is None:
        work()
    else:
        held.append(work)


@contextlib.contextmanager
def held() -> Iterator[list]:
    """Hold the work this thread defers meanwhile; the list to ``run`` after the answer."""
    _local.held = works = []
    try:
        yield works
    finally:
        _local.held = None


def run(works: list) -> None:
    for work in works:
        try:
            work()
        except Exception:  # never the transport's: the next request must be served
            logger.exception("runtime host: the work after an answer failed")


def run_without_waiting(works: list, hand_off: Callable[[list], None]) -> None:
    """On an event loop: each work that can be done here without waiting (its
    ``without_waiting()`` did it and says True), the others handed together to ``hand_off``
    (a thread's ``run``)."""
    left = []
    for work in works:
        quick = getattr(work, "without_waiting", None)
        try:
            if quick is not None and quick():
                continue
        except Exception:
            logger.exception("runtime host: the work after an answer failed on the loop")
        left.append(work)
    if left:
        hand_off(left)
