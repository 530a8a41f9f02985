"""Which runtime host takes a call, when ``RUNTIME_URL`` lists several (DESIGN.md, "Runtime
past one machine").

Rendezvous hashing (highest random weight) on the version's bundle hash: every host gets a
weight for the key, and the hosts are tried by decreasing weight. A version lands on the same
host in every web and worker process while the list is the same (its warm pool is reused),
versions spread evenly, and adding or removing a host moves only the versions whose first
choice it becomes or was (about 1/n of them).

A host that refused a connection is marked down in this process and skipped until it answers
``GET /health`` again: a caller that reaches a marked host probes it, at most once every
``PROBE_INTERVAL`` seconds per host (the others skip it meanwhile); no thread of its own.
While every host is marked down they are all tried anyway, in order: a mark is a hint, never
a reason to fail a call without trying.

A host is spoken to over HTTP (``http://``: one keep-alive connection pool per host,
urllib3) or in frames (``unix:///path`` on one machine, ``tcp://host:port`` across
machines: one persistent connection per host and thread, ``runtime/frames.py``, on which
the thread's calls read their own answers).
"""

import functools
import hashlib
import os
import threading
import time
from collections.abc import Callable, Iterator, Sequence

from django.conf import settings
from urllib3 import HTTPConnectionPool, Timeout, connection_from_url
from urllib3.exceptions import HTTPError

from ..environment import runtime_signing_key
from ..runtime import frames, protocol

#: Seconds between two probes of a host marked down, and a probe's whole time limit.
PROBE_INTERVAL = 2.0
PROBE_TIMEOUT = 1.0
#: Connections kept open per host: at least the threads of a web process (gunicorn's
#: threads, and the 16 that render a page's blocks at once). A thread past it opens a
#: connection of its own, closed after its call (``block=False``).
POOL_SIZE = 32


@functools.lru_cache(maxsize=16)
def host_urls(setting: str) -> tuple[str, ...]:
    """The hosts of ``RUNTIME_URL``: one URL, or several comma-separated (read once per
    setting: every call asks)."""
    return tuple(url.strip().rstrip("/") for url in setting.split(",") if url.strip())


def weight(host: str, key: str) -> int:
    digest = hashlib.blake2b(f"{host}\n{key}".encode(), digest_size=8).digest()
    return int.from_bytes(digest, "big")


def rendezvous_order(key: str, hosts: Sequence[str]) -> list[str]:
    """``hosts`` by decreasing weight for ``key``: the first is the key's host."""
    if len(hosts) == 1:
        return list(hosts)  # no weights to compare
    return sorted(hosts, key=lambda host: weight(host, key), reverse=True)


class HostMarks:
    """The hosts found down in this process, and when each may be probed again."""

    def __init__(
        self,
        probe: Callable[[str], bool],
        *,
        interval: float = PROBE_INTERVAL,
        clock: Callable[[], float] = time.monotonic,
    ):
        self._probe, self._interval, self._clock = probe, interval, clock
        self._down: dict[str, float] = {}  # host -> when it may be probed next
        self._lock = threading.Lock()

    def mark_down(self, host: str) -> None:
        with self._lock:
            self._down.setdefault(host, self._clock() + self._interval)

    def answered(self, host: str) -> None:
        """``host`` answered a call: it is up, whatever its mark said."""
        if host in self._down:
            with self._lock:
                self._down.pop(host, None)

    def is_down(self, host: str) -> bool:
        """Whether ``host`` is marked down; a marked host whose probe is due is probed here
        first (by this caller only)."""
        with self._lock:
            due = self._down.get(host)
            if due is None:
                return False
            if self._clock() < due:
                return True
            self._down[host] = self._clock() + self._interval
        if not self._probe(host):
            return True
        self.answered(host)
        return False

    def candidates(self, key: str, hosts: Sequence[str]) -> Iterator[str]:
        """The hosts to try for ``key``, in its rendezvous order, skipping those marked down;
        all of them when every one is marked down. Lazy: a host after the one that takes
        the call is never looked at (nor probed)."""
        ranked = rendezvous_order(key, hosts)
        offered = False
        for host in ranked:
            if not self.is_down(host):
                offered = True
                yield host
        if not offered:
            yield from ranked


_pools: dict[str, HTTPConnectionPool] = {}
_pools_lock = threading.Lock()


def pool(host: str) -> HTTPConnectionPool:
    """The process's connection pool to ``host`` (a ``scheme://host:port`` URL)."""
    found = _pools.get(host)
    if found is None:
        with _pools_lock:
            found = _pools.get(host)
            if found is None:
                found = _pools[host] = connection_from_url(
                    host, maxsize=POOL_SIZE, block=False, retries=False
                )
    return found


def speaks_frames(host: str) -> bool:
    """Whether ``host``'s URL is one of the frames' (``unix://``, ``tcp://``), not HTTP."""
    return host.partition("://")[0] in frames.SCHEMES


class _ThreadConnections(threading.local):
    """Each thread's connections, by host."""

    def __init__(self):
        self.by_host: dict[str, frames.Connection] = {}


_thread_connections = _ThreadConnections()


def connection(host: str) -> frames.Connection:
    """The calling thread's connection to ``host`` (frames), made again once it has ended;
    frames.ConnectFailed when it cannot be made within ``RUNTIME_CONNECT_TIMEOUT``. A
    connection per thread: its calls read their own answers (``frames.Connection``)."""
    mine = _thread_connections.by_host
    found = mine.get(host)
    if found is None or found.broken:
        found = mine[host] = frames.Connection(
            host, runtime_signing_key(), settings.RUNTIME_CONNECT_TIMEOUT
        )
    return found


def _forget_inherited_connections():
    """A forked child (a Celery prefork worker, a preloading server's worker) opens its own:
    frames of two processes on one connection would interleave. The forking thread's are let
    go of here; the other threads' ended with them (the child has none of their state)."""
    for inherited in _thread_connections.by_host.values():
        inherited.abandon()
    _thread_connections.by_host.clear()


os.register_at_fork(after_in_child=_forget_inherited_connections)


def health(host: str, timeout: float) -> tuple[int, bytes] | None:
    """``host``'s answer to ``GET /health`` within ``timeout`` s (status, body); None when
    it gives none."""
    if speaks_frames(host):
        fields: list[bytes | None] = [None] * frames.REQUEST_FIELDS
        fields[frames.PATH] = protocol.HEALTH_PATH.encode()
        try:
            answer = connection(host).call(
                fields, timeout=timeout, answer_limit=frames.ANSWER_HEADROOM
            )
        except (frames.FrameError, frames.AnswerTooLarge):
            return None
        return answer.status, answer.body
    try:
        response = pool(host).urlopen(
            "GET",
            protocol.HEALTH_PATH,
            timeout=Timeout(total=timeout),
            retries=False,
            redirect=False,
        )
    except HTTPError:
        return None
    return response.status, response.data


def healthy(host: str) -> bool:
    """Whether ``host`` answers ``GET /health`` with 200 within ``PROBE_TIMEOUT``."""
    answer = health(host, PROBE_TIMEOUT)
    return answer is not None and answer[0] == 200


#: This process's marks, probed with ``healthy``.
marks = HostMarks(healthy)
