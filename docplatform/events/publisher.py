"""Publishing tasks to the broker, bounded in time: a broker that is down, or that accepts
connections and never answers, never holds a request or a command.

Each publish waits at most ``BROKER_TIMEOUT_SECONDS`` per try (connect, and each read or
write; the transport options in settings), with one retry that reconnects a pooled
connection the broker dropped. A publish that fails opens this process's breaker for
``BROKER_BACKOFF_SECONDS``: meanwhile every publish to that broker fails at once instead of
waiting again, and what was not sent stays in the outbox for the sweeper. The breaker is kept
per broker URL, so pointing the app at another broker starts afresh.
"""

import threading
import time

from celery import current_app
from django.conf import settings


class BrokerUnavailable(Exception):
    """The broker could not be reached (or was given up on): nothing was published."""


_down_until: dict[str, float] = {}  # broker URL -> monotonic time the breaker closes
_lock = threading.Lock()


def _broker() -> str:
    conf = current_app.conf
    return conf.broker_write_url or conf.broker_url or ""


def raise_if_broker_down(broker: str | None = None) -> None:
    """Raise BrokerUnavailable while this process's breaker is open (the broker failed a
    moment ago), before any work is spent on a publish. The broker's URL (slow to read from
    Celery's settings) is read only while some breaker is open."""
    now = time.monotonic()
    if not any(until > now for until in _down_until.values()):
        return
    if _down_until.get(broker or _broker(), 0.0) > now:
        raise BrokerUnavailable("it failed a moment ago; not tried again yet")


def publish(task_name: str, *, args=(), countdown: float | None = None) -> None:
    """Send one task, or raise BrokerUnavailable (at once while the breaker is open)."""
    broker = _broker()
    raise_if_broker_down(broker)
    try:
        current_app.send_task(task_name, args=list(args), countdown=countdown)
    except Exception as exc:
        with _lock:
            _down_until[broker] = time.monotonic() + settings.BROKER_BACKOFF_SECONDS
        raise BrokerUnavailable(f"{type(exc).__name__}: {exc}") from exc
