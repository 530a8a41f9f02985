"""The runtime host's settings, read from its environment once at start (``HostConfig``).

Environment: ``RUNTIME_SIGNING_KEY`` (required; comma-separated keys during a rotation; or
``RUNTIME_SIGNING_KEY_FILE``, a file holding it), ``RUNTIME_SANDBOX`` (auto),
``RUNTIME_WORKER_USER`` (nobody), ``RUNTIME_CALL_TIMEOUT`` (10 s), ``RUNTIME_WORKER_MEMORY_MB``
(512),
``RUNTIME_WORKER_CPU_SECONDS`` (300, a worker's lifetime CPU budget: it is replaced at half of
it), ``RUNTIME_WORKER_PROCESSES`` (32), ``RUNTIME_WORKER_OPEN_FILES`` (256),
``RUNTIME_WORKER_FILE_MB`` (64), ``RUNTIME_WORKER_TMP_MB`` (64), ``RUNTIME_MAX_ENVELOPE_MB`` (12),
``RUNTIME_MAX_ANSWER_MB`` (10: a larger answer is never read, and is a 502 ``answer_too_large``),
``RUNTIME_SIGNATURE_TOLERANCE`` (300 s), ``RUNTIME_ALLOWED_NETWORKS`` (none: CIDRs that
``context.fetch`` may reach although not public), ``RUNTIME_FETCH_MAX_MB`` (10),
``RUNTIME_FETCH_TIMEOUT`` (10 s in all per request; 3 s to connect),
``RUNTIME_INSPECT_CONCURRENCY`` (2 code checks loading code at once; one more waits up to
``INSPECT_WAIT_SECONDS``, then is answered 503 ``busy``: publishing in a loop cannot take the
host's processors from the integrations it runs).

Workers (``pool.py``, ``capacity.py``, ``spares.py``): a version's pool grows with the calls
waiting, one worker per waiting call, up to ``RUNTIME_WORKERS_MAX`` (4 per version; the old
name ``RUNTIME_WORKERS_PER_VERSION`` is still read when it is not set), and a worker idle for
``RUNTIME_WORKER_IDLE_SECONDS`` (60) is stopped, down to ``RUNTIME_WORKERS_MIN`` (0: a version
not called for a minute holds no process). ``RUNTIME_SPARE_WORKERS`` (2) sandboxed
interpreters are kept started ahead, bound to no version: a version that needs a worker takes
one and loads its code into it (a few ms, where starting one takes about 300 ms). All workers
together, spares included, are at most ``RUNTIME_MAX_WORKERS`` (16), and none starts while
their resident memory (``VmRSS`` of each worker's processes, read from ``/proc`` about once a
second; not their configured limit, which they seldom reach) is at ``RUNTIME_MAX_MEMORY_MB``
(4096). When the host is full, a freed slot goes to the integration holding the fewest
workers among those waiting: an idle worker of another version is stopped for it, and a
worker of an integration holding two more than one waiting (or any, when that one has
none) is stopped when its call ends. A call waits at most ``RUNTIME_QUEUE_TIMEOUT`` (10 s)
for a worker, and at most ``RUNTIME_MAX_QUEUED`` (16) calls of one integration wait at once;
beyond either, 503 ``busy`` with ``Retry-After: 1``. So one integration holds at most
``RUNTIME_WORKERS_MAX`` request threads per version running plus ``RUNTIME_MAX_QUEUED``
waiting, 20 by default, of the 48 that ``manage.py runtime_host --gunicorn`` gives each
process (the development server makes one per connection). The limits are per host process:
under gunicorn, each process keeps its own pools and spares. A version's pool unused for
``RUNTIME_POOL_IDLE_SECONDS`` (300) is closed (the host forgets its bundle), and at most
``RUNTIME_MAX_VERSIONS`` (64) are kept, the least recently used closed first.
"""

import os
from dataclasses import dataclass, field

from docplatform_sdk import signing
from docplatform_sdk.addresses import parse_networks

from .capacity import PoolSettings

MEBIBYTE = 1024 * 1024


@dataclass(frozen=True)
class HostConfig:
    signing_keys: list[str]
    sandbox: str = "auto"
    worker_user: str = "nobody"
    call_timeout: float = 10
    worker_memory_mb: int = 512
    worker_cpu_seconds: int = 300
    worker_processes: int = 32
    worker_open_files: int = 256
    worker_file_mb: int = 64
    worker_tmp_mb: int = 64
    pools: PoolSettings = field(default_factory=PoolSettings)
    max_envelope_bytes: int = 12 * MEBIBYTE
    max_answer_mb: float = 10
    signature_tolerance: int = signing.DEFAULT_TOLERANCE
    allowed_networks: tuple = ()
    fetch_max_mb: float = 10
    fetch_timeout: float = 10
    inspect_concurrency: int = 2

    @classmethod
    def from_environ(cls, environ=os.environ) -> "HostConfig":
        keys = [key.strip() for key in _signing_keys(environ).split(",")]
        keys = [key for key in keys if key]
        if not keys:
            raise RuntimeError("set RUNTIME_SIGNING_KEY, the key the platform signs envelopes with")

        def number(name: str, default, kind=int, zero=False):
            raw = environ.get(name)
            try:
                value = kind(raw) if raw else default
            except ValueError:
                raise RuntimeError(f"{name} must be a number, not {raw!r}") from None
            if value < 0 or (value == 0 and not zero):
                raise RuntimeError(f"{name} must be {'at least 0' if zero else 'positive'}")
            return value

        try:
            networks = parse_networks(environ.get("RUNTIME_ALLOWED_NETWORKS", "").split(","))
        except ValueError as error:
            raise RuntimeError(f"RUNTIME_ALLOWED_NETWORKS: {error}") from None
        return cls(
            signing_keys=keys,
            sandbox=environ.get("RUNTIME_SANDBOX", "auto").strip().lower() or "auto",
            worker_user=environ.get("RUNTIME_WORKER_USER", "nobody").strip() or "nobody",
            call_timeout=number("RUNTIME_CALL_TIMEOUT", 10, float),
            worker_memory_mb=number("RUNTIME_WORKER_MEMORY_MB", 512),
            worker_cpu_seconds=number("RUNTIME_WORKER_CPU_SECONDS", 300),
            worker_processes=number("RUNTIME_WORKER_PROCESSES", 32),
            worker_open_files=number("RUNTIME_WORKER_OPEN_FILES", 256),
            worker_file_mb=number("RUNTIME_WORKER_FILE_MB", 64),
            worker_tmp_mb=number("RUNTIME_WORKER_TMP_MB", 64),
            pools=PoolSettings(
                workers_min=number("RUNTIME_WORKERS_MIN", 0, zero=True),
                workers_max=number("RUNTIME_WORKERS_MAX", number("RUNTIME_WORKERS_PER_VERSION", 4)),
                worker_idle_seconds=number("RUNTIME_WORKER_IDLE_SECONDS", 60, float),
                max_workers=number("RUNTIME_MAX_WORKERS", 16),
                max_memory_bytes=number("RUNTIME_MAX_MEMORY_MB", 4096) * MEBIBYTE,
                max_queued=number("RUNTIME_MAX_QUEUED", 16),
                spare_workers=number("RUNTIME_SPARE_WORKERS", 2, zero=True),
                queue_timeout=number("RUNTIME_QUEUE_TIMEOUT", 10, float),
                pool_idle_seconds=number("RUNTIME_POOL_IDLE_SECONDS", 300, float),
                max_pools=number("RUNTIME_MAX_VERSIONS", 64),
            ),
            max_envelope_bytes=int(number("RUNTIME_MAX_ENVELOPE_MB", 12, float) * MEBIBYTE),
            max_answer_mb=number("RUNTIME_MAX_ANSWER_MB", 10, float),
            signature_tolerance=number("RUNTIME_SIGNATURE_TOLERANCE", signing.DEFAULT_TOLERANCE),
            allowed_networks=tuple(networks),
            fetch_max_mb=number("RUNTIME_FETCH_MAX_MB", 10, float),
            fetch_timeout=number("RUNTIME_FETCH_TIMEOUT", 10, float),
            inspect_concurrency=number("RUNTIME_INSPECT_CONCURRENCY", 2),
        )


def _signing_keys(environ) -> str:
    """The key(s), from the variable or the file it names; the file is read once."""
    path = environ.get("RUNTIME_SIGNING_KEY_FILE")
    if path:
        try:
            with open(path, encoding="utf-8") as handle:
                return handle.read().strip()
        except OSError as error:
            raise RuntimeError(f"RUNTIME_SIGNING_KEY_FILE {path}: {error.strerror}") from None
    return environ.get("RUNTIME_SIGNING_KEY", "")
