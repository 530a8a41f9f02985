"""A call the runtime host is to run, and the line its log keeps of it."""

import logging
import time
from collections.abc import Callable
from dataclasses import dataclass

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
    """The host's line for a call (none for a health or code check)."""
    if described["integration"] != "-":
        logger.info(
            "event=%s integration=%s version=%s status=%s outcome=%s duration_ms=%.1f",
            described["event"],
            described["integration"],
            described["version"],
            reply.status,
            reply.outcome,
            (time.monotonic() - started) * 1000,
        )
