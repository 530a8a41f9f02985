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

Workers (``pool.py``, ``capacity.py``, ``spares.py``): a worker serves one installation's
calls (the organization's installation the signed environment names); a pool of one version
and installation grows with the calls waiting, one worker per waiting call, up to
``RUNTIME_WORKERS_MAX`` (4; the old name ``RUNTIME_WORKERS_PER_VERSION`` is still read when it
is not set), and a worker idle for ``RUNTIME_WORKER_IDLE_SECONDS`` (60) is stopped, down to
``RUNTIME_WORKERS_MIN`` (0: a pool not called for a minute holds no process).
``RUNTIME_SPARE_WORKERS`` (2) sandboxed interpreters are kept started ahead, bound to no
version, whatever the number of workers: a pool that needs a worker takes one and loads its
code into it (a few ms, where starting one takes about 300 ms). The workers bound to a
version are kept by least recent use within ``RUNTIME_MEMORY_BUDGET_MB`` (half the machine's
memory, or of its cgroup's limit when lower; the old name ``RUNTIME_MAX_MEMORY_MB`` is still
read when it is not set): what each holds, measured from outside about once a second
(``process_accounts.memory_of``), in all, and at most ``RUNTIME_MAX_WORKERS`` of them (by
default as many as the budget holds at ``capacity.WORKER_BYTES_ESTIMATE`` each, and as the
host's open files allow, three pipes each); a worker wanted beyond either takes the place of
the least recently used idle one, and a budget overrun found by a measure stops the least
recently used idle ones. When several integrations wait, a freed slot goes to the one
holding the fewest workers, and a worker of an integration holding two more than one
waiting (or any, when that one has none) is stopped when its call ends. A call waits at most
``RUNTIME_QUEUE_TIMEOUT`` (10 s) for a worker, and at most ``RUNTIME_MAX_QUEUED`` (16) calls
of one integration wait at once; beyond either, 503 ``busy`` with ``Retry-After: 1``. So one
integration holds at most ``RUNTIME_WORKERS_MAX`` request threads per version and
installation running plus ``RUNTIME_MAX_QUEUED`` waiting, of the 48 that ``manage.py
runtime_host --gunicorn`` gives each process (the development server makes one per
connection). The limits are per host process: under gunicorn, each process keeps its own
pools, spares and budget (with several host processes on a machine, give each its share in
``RUNTIME_MEMORY_BUDGET_MB``). A pool unused for ``RUNTIME_POOL_IDLE_SECONDS`` (300) is
closed, and the host forgets a version's bundle with its last pool; at most
``RUNTIME_MAX_VERSIONS`` versions are kept (as many as ``RUNTIME_MAX_WORKERS`` by default),
the least recently used closed first.
"""

import os
import resource
from dataclasses import dataclass, field

from docplatform_sdk import signing
from docplatform_sdk.addresses import parse_networks

from .capacity import WORKER_BYTES_ESTIMATE, PoolSettings

MEBIBYTE = 1024 * 1024
#: Open files the host keeps for itself (connections, its log, ``/proc`` reads) before three
#: per worker (its pipes), when the number of workers is defaulted.
RESERVED_OPEN_FILES = 256


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

        budget_mb = number(
            "RUNTIME_MEMORY_BUDGET_MB",
            number("RUNTIME_MAX_MEMORY_MB", machine_memory_bytes() // 2 // MEBIBYTE),
        )
        max_workers = number("RUNTIME_MAX_WORKERS", default_max_workers(budget_mb * MEBIBYTE))
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
                max_workers=max_workers,
                memory_budget_bytes=budget_mb * MEBIBYTE,
                max_queued=number("RUNTIME_MAX_QUEUED", 16),
                spare_workers=number("RUNTIME_SPARE_WORKERS", 2, zero=True),
                queue_timeout=number("RUNTIME_QUEUE_TIMEOUT", 10, float),
                pool_idle_seconds=number("RUNTIME_POOL_IDLE_SECONDS", 300, float),
                max_versions=number("RUNTIME_MAX_VERSIONS", max_workers),
            ),
            max_envelope_bytes=int(number("RUNTIME_MAX_ENVELOPE_MB", 12, float) * MEBIBYTE),
            max_answer_mb=number("RUNTIME_MAX_ANSWER_MB", 10, float),
            signature_tolerance=number("RUNTIME_SIGNATURE_TOLERANCE", signing.DEFAULT_TOLERANCE),
            allowed_networks=tuple(networks),
            fetch_max_mb=number("RUNTIME_FETCH_MAX_MB", 10, float),
            fetch_timeout=number("RUNTIME_FETCH_TIMEOUT", 10, float),
            inspect_concurrency=number("RUNTIME_INSPECT_CONCURRENCY", 2),
        )


def machine_memory_bytes() -> int:
    """The machine's memory (``MemTotal``), or its cgroup's limit when lower (a container)."""
    total = 0
    with open("/proc/meminfo", encoding="ascii") as meminfo:
        for line in meminfo:
            if line.startswith("MemTotal:"):
                total = int(line.split()[1]) * 1024
                break
    try:
        with open("/sys/fs/cgroup/memory.max", encoding="ascii") as limit:
            raw = limit.read().strip()
    except OSError:
        return total
    return min(total, int(raw)) if raw.isdigit() else total


def default_max_workers(budget_bytes: int) -> int:
    """As many workers as ``budget_bytes`` holds at ``WORKER_BYTES_ESTIMATE`` each, and as
    the host's open files allow (three pipes each, once the host's own and the eighth its
    workers' ``/proc`` files may keep are set aside), at least one."""
    open_files = resource.getrlimit(resource.RLIMIT_NOFILE)[0]
    usable = open_files - open_files // 8 - RESERVED_OPEN_FILES
    by_files = usable // 3 if open_files > 0 else budget_bytes
    return max(1, min(budget_bytes // WORKER_BYTES_ESTIMATE, by_files))


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
