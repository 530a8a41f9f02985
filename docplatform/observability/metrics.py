"""Metrics (Prometheus), counted by every process of a machine: prometheus_client's
multiprocess mode, each process writing its counters to its own files in
``PROMETHEUS_MULTIPROC_DIR`` (settings, ``observability``), which a scrape adds up.

- ``docplatform_deliveries_total{consumer, outcome}``: deliveries settled, by what they came
  to (``succeeded``, ``failed``, ``retrying``, ``cancelled``, ``postponed``), counted where
  every consumer settles (``events.leases.deliveries_settle``);
- ``docplatform_delivery_attempt_seconds{consumer}``: how long attempts took (each consumer
  times its own: the webhook POST, the runtime call);
- ``docplatform_runtime_call_seconds{kind}``: the gateway's calls to the runtime host by kind
  (``event``, ``fetch``, ``ui_render``, ``completion``, ``oauth``), failed ones too;
- at each scrape, from the database: ``docplatform_outbox_backlog{consumer}`` (open
  deliveries) and ``docplatform_outbox_oldest_due_age_seconds{consumer}`` (how long the
  oldest delivery that is due has been waiting); plug-in apps add collectors of their own
  (``collector_register``: the integrations app, the runtime hosts' workers per pool).

**Dead processes.** A process's counters outlive it (a counter never goes down): at each
scrape the files of processes no longer running are added into one archive file per metric
type and removed, so the folder holds a file per live process, not one per process ever
started (Celery's children come and go). Their live gauges (none today) are dropped, as
prometheus_client's ``mark_process_dead`` does. Process ids are this machine's: the folder
must not be shared between machines or containers with their own process ids.
"""

import fcntl
import hmac
import logging
import os
import re
from contextlib import contextmanager
from pathlib import Path

from django.conf import settings
from prometheus_client import CollectorRegistry, Counter, Histogram, generate_latest
from prometheus_client.mmap_dict import MmapedDict
from prometheus_client.multiprocess import MultiProcessCollector, mark_process_dead

logger = logging.getLogger(__name__)

#: Seconds: from a fast local POST to the longest timeouts.
LATENCY_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60)

DELIVERIES = Counter(
    "docplatform_deliveries",
    "Deliveries settled, by consumer and by what they came to.",
    ["consumer", "outcome"],
)
ATTEMPT_SECONDS = Histogram(
    "docplatform_delivery_attempt_seconds",
    "How long delivery attempts took, by consumer.",
    ["consumer"],
    buckets=LATENCY_BUCKETS,
)
RUNTIME_CALL_SECONDS = Histogram(
    "docplatform_runtime_call_seconds",
    "How long the gateway's calls to the runtime host took, by kind.",
    ["kind"],
    buckets=LATENCY_BUCKETS,
)


def deliveries_settled(consumer: str, outcome: str, count: int = 1) -> None:
    DELIVERIES.labels(consumer=consumer, outcome=outcome).inc(count)


def attempt_observed(consumer: str, seconds: float) -> None:
    ATTEMPT_SECONDS.labels(consumer=consumer).observe(seconds)


def runtime_call_observed(kind: str, seconds: float) -> None:
    RUNTIME_CALL_SECONDS.labels(kind=kind).observe(seconds)


# --- collectors read at each scrape -------------------------------------------------------

_collectors: list = []


def collector_register(collector) -> None:
    """Add a collector (an object with ``collect()`` yielding metric families) to every
    scrape; plug-in apps register theirs in their ``AppConfig.ready()``."""
    if not any(type(known) is type(collector) for known in _collectors):
        _collectors.append(collector)


def scrape(*, shared: bool = True) -> bytes:
    """The text exposition of the metrics of every process of this machine and, with
    ``shared``, the collectors' (what they read counts every machine: the outbox from the
    database, the runtime hosts' workers). A worker machine's ``metrics_serve`` leaves them
    out, so that nothing is counted once per machine scraped."""
    folder = Path(settings.PROMETHEUS_MULTIPROC_DIR)
    try:
        dead_processes_archive(folder)
    except OSError:
        logger.exception("metrics: the files of dead processes were not archived")
    registry = CollectorRegistry()
    MultiProcessCollector(registry, path=str(folder))
    for collector in _collectors if shared else ():
        registry.register(collector)
    return generate_latest(registry)


def scraper_authorized(authorization: str) -> bool:
    """Whether an ``Authorization`` header's value is ``Bearer <METRICS_TOKEN>``; never while
    the token is unset."""
    token = settings.METRICS_TOKEN
    if not token:
        return False
    scheme, _, given = authorization.partition(" ")
    if scheme.lower() != "bearer":
        return False
    return hmac.compare_digest(given.strip().encode(), token.encode())


# --- the files of dead processes ----------------------------------------------------------

#: ``counter_<pid>.db``, ``histogram_<pid>.db``, ``gauge_<mode>_<pid>.db``, ...
_PROCESS_FILE = re.compile(r"^(?P<type>[a-z]+)_(?:(?P<mode>[a-z]+)_)?(?P<pid>\d+)\.db$")
#: The types whose values add up across processes, archived when their process is gone.
ADDITIVE = ("counter", "histogram", "summary")


def dead_processes_archive(folder: Path) -> int:
    """Add the counters of processes that are gone into the archive files and remove theirs
    (and their live gauges); returns how many processes were archived. One scrape at a time
    (a lock file), so nothing is added twice."""
    dead = set()
    for path in folder.glob("*.db"):
        match = _PROCESS_FILE.match(path.name)
        if match and not _alive(int(match["pid"])):
            dead.add(int(match["pid"]))
    if not dead:
        return 0
    with _locked(folder / ".archive.lock"):
        for pid in sorted(dead):
            for kind in ADDITIVE:
                path = folder / f"{kind}_{pid}.db"
                if path.exists():
                    _add_into(folder / f"{kind}_archive.db", path)
                    path.unlink()
            mark_process_dead(pid, str(folder))
    return len(dead)


def _add_into(archive: Path, path: Path) -> None:
    values = list(MmapedDict.read_all_values_from_file(str(path)))
    into = MmapedDict(str(archive))
    try:
        for key, value, timestamp, _ in values:
            current, _ = into.read_value(key)
            into.write_value(key, current + value, timestamp)
    finally:
        into.close()


def _alive(pid: int) -> bool:
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # another user's process: alive
        return True
    return True


@contextmanager
def _locked(path: Path):
    with path.open("a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)
