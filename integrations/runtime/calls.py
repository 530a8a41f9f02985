"""A call the runtime host is to run, and the line its log keeps of it."""

import logging
import time
from collections.abc import Callable
from dataclasses import dataclass

from . import after_reply
from .pool import WorkerPool
from .replies import Reply

logger = logging.getLogger("integrations.runtime")


@dataclass(frozen=True)
class Call:
    """A call ready to run: its pool, the message for the worker, the egress it may use."""

    pool: WorkerPool
    message: dict
    egress: Callable[[dict, float], dict]


def described_call() -> dict:
    """What a call's log line says of it, filled in as the request is read."""
    return {"event": "-", "integration": "-", "version": "-"}


def log_call(described: dict, reply: Reply, started: float):
    """The host's line for a call (none for a health or code check), written once the answer
    is on its way (``after_reply``: a write to the host's log is no part of the answer)."""
    if described["integration"] != "-":
        duration_ms = (time.monotonic() - started) * 1000
        after_reply.defer(_LogLine(described, reply.status, reply.outcome, duration_ms))


@dataclass(frozen=True)
class _LogLine:
    described: dict
    status: int
    outcome: str
    duration_ms: float

    def __call__(self):
        logger.info(
            "event=%s integration=%s version=%s status=%s outcome=%s duration_ms=%.1f",
            self.described["event"],
            self.described["integration"],
            self.described["version"],
            self.status,
            self.outcome,
            self.duration_ms,
        )

    def without_waiting(self) -> bool:
        """On the event loop: written there (``after_reply.run_without_waiting``)."""
        self()
        return True
