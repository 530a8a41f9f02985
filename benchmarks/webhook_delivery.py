"""Webhook delivery on this machine: ours beside the limit and a peer, in one run.

Three contenders send the same signed JSON POSTs to ONE local receiver
(``webhook_receiver.py``: a single-threaded ``asyncio`` server in a process of its own, which
records the arrival time of each delivery id; its capacity is measured alone first):

ours     ``docplatform.events.fire("space_content_updated", ...)`` in a transaction, to one
         webhook installation whose URL is the receiver; a real ``celery -A docplatform worker``
         process on Redis delivers, PostgreSQL is the database (one of the benchmark's own).
bare     the limit: the same number of POSTs, same body size and headers, an HMAC-SHA256
         signature computed per request, sent by bare ``requests.Session`` objects from as many
         threads as the worker has slots.
peer     django-webhook 0.0.15 (in ``.venv-peer``, created on first run): a minimal Django
         project (``peer_django_webhook/``) whose model saves fire its webhooks through Celery,
         with a worker of the same pool and concurrency, its own PostgreSQL database and Redis
         database number, and the platform's Celery and database settings.

Each contender, in turn (only its own processes run meanwhile), after a warm-up:

1. **end to end**: N events fired as fast as one producer can while the worker delivers:
   N / (last receipt - first commit). Firing (our outbox write, the peer's model save) and
   delivering share the machine's two cores. Beside it, in brackets, the rate the producer
   fired at meanwhile, N / (last commit - first commit): end to end can be no faster.
2. **delivery**: N events are committed and queued while its sending is paused (the Celery
   worker stops consuming, the bare threads wait), then it is let go: deliveries/s = (the
   deliveries received after the resume - 1) / (last receipt - first receipt), since a
   Celery worker takes about a second to consume again. The rate of delivery alone.
3. **latency**: M events fired at a steady rate far below every contender's capacity; p50 and
   p99 of receipt time - commit time (the event's transaction committed; for the bare client,
   the moment the id was handed to the threads), so nothing waits behind a backlog.

CPU time of each part (worker, producer, receiver, PostgreSQL, Redis) is read from /proc during
phases 1 and 2. ``--profile DIR`` records each worker with py-spy during those phases.

    .venv/bin/python benchmarks/webhook_delivery.py [--events 2000] [--pools threads,prefork] \
        [--concurrency 8] [--steady-events 400] [--steady-rate 20] [--contenders bare,ours,peer]

Needs PostgreSQL (``--postgres``, trust auth) and Redis (``--redis``) on 127.0.0.1. It creates
and drops its databases (``test_bench_webhook_ours``, ``bench_webhook_peer``; each name after
``--database-prefix``, so that runs beside others keep apart), uses two Redis database numbers
that must be empty (``--redis-dbs``) and empties them at the end, and stops every process it
started, also on Ctrl-C or an error. Requests go only to 127.0.0.1. The Celery workers are
those of the Python that runs it (``.venv/bin/celery`` for ``.venv/bin/python``).
"""

import argparse
import base64
import hashlib
import hmac
import json
import os
import queue
import secrets
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path[:0] = [str(ROOT), str(HERE)]

import requests
from firing import fire_schedule

PEER_DIR = HERE / "peer_django_webhook"
PEER_VENV = HERE / ".venv-peer"
PEER_REQUIREMENTS = ["django<6", "celery[redis]", "psycopg[binary]", "django-webhook==0.0.15"]
OURS_DATABASE = "test_bench_webhook_ours"  # made by create_test_db(), after the prefix
PEER_DATABASE = "bench_webhook_peer"
TOOLS_VENV = HERE / ".venv-tools"  # py-spy, for --profile
#: The share of the bare client's delivery rate ours must reach, per Celery pool (issue 12).
BARE_SHARE_GOAL = {"prefork": 0.9, "threads": 0.6}
OUR_QUEUES = "webhooks,default,runtime"
CLOCK_TICKS = os.sysconf("SC_CLK_TCK")


# --- processes and clean-up ------------------------------------------------------------------


def _raise_interrupt(signum, frame):
    raise KeyboardInterrupt(f"signal {signum}")


def start_process(stack: ExitStack, command, *, name, logs: Path, env=None, cwd=None):
    """Start ``command`` in a session of its own (so the terminal's Ctrl-C does not reach it
    half-way) and register its stop: SIGTERM to its process group, SIGKILL after 10 s."""
    log = open(logs / f"{name}.log", "wb")  # noqa: SIM115 - closed by the stack
    stack.callback(log.close)
    process = subprocess.Popen(
        command,
        stdout=subprocess.PIPE if name == "receiver" else log,
        stderr=log,
        env=env,
        cwd=cwd,
        start_new_session=True,
    )
    stack.callback(stop_process, process)
    return process


def stop_process(process: subprocess.Popen) -> None:
    if process.poll() is not None:
        return
    try:
        os.killpg(process.pid, signal.SIGTERM)
        process.wait(timeout=10)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        process.wait(timeout=10)
    except ProcessLookupError:
        pass


def log_tail(logs: Path, name: str) -> str:
    path = logs / f"{name}.log"
    return path.read_text(errors="replace")[-3000:] if path.exists() else ""


# --- CPU accounting from /proc ---------------------------------------------------------------


def _proc_stats():
    """(pid, name, process group, CPU seconds of it and its reaped children) of each process."""
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            with open(f"/proc/{entry.name}/stat", "rb") as stat:
                raw = stat.read()
        except OSError:
            continue
        name = raw[raw.index(b"(") + 1 : raw.rindex(b")")].decode(errors="replace")
        fields = raw[raw.rindex(b")") + 2 :].split()
        ticks = sum(int(value) for value in fields[11:15])  # utime stime cutime cstime
        yield int(entry.name), name, int(fields[2]), ticks / CLOCK_TICKS


@dataclass
class CpuSnapshot:
    """CPU seconds used so far by the parts of the system, and the machine's busy time."""

    parts: dict
    busy: float
    total: float

    @classmethod
    def take(cls, groups: dict, this_process: str | None = None) -> "CpuSnapshot":
        """``groups``: part name -> process group (each started in a session of its own);
        ``this_process``: the part that this process plays, if any."""
        parts = dict.fromkeys([*groups, "postgres", "redis"], 0.0)
        if this_process:
            parts[this_process] = time.process_time()
        for _pid, name, group, seconds in _proc_stats():
            for part, pgid in groups.items():
                if group == pgid:
                    parts[part] += seconds
            if name == "postgres":
                parts["postgres"] += seconds
            elif name.startswith("redis-server"):
                parts["redis"] += seconds
        with open("/proc/stat") as stat:
            # user nice system idle iowait irq softirq steal (guest time is inside user)
            ticks = [int(value) for value in stat.readline().split()[1:9]]
        idle = ticks[3] + ticks[4]  # idle + iowait
        return cls(parts, (sum(ticks) - idle) / CLOCK_TICKS, sum(ticks) / CLOCK_TICKS)

    def since(self, earlier: "CpuSnapshot") -> dict:
        used = {part: self.parts[part] - earlier.parts.get(part, 0.0) for part in self.parts}
        used["machine busy"] = (self.busy - earlier.busy) / max(self.total - earlier.total, 1e-9)
        return used


# --- the receiver ----------------------------------------------------------------------------


class Receiver:
    """The receiver process, and the arrivals it has recorded (polled over its control URL)."""

    def __init__(self, stack: ExitStack, logs: Path):
        self.process = start_process(
            stack,
            [sys.executable, str(HERE / "webhook_receiver.py"), "serve"],
            name="receiver",
            logs=logs,
        )
        self.port = int(self.process.stdout.readline())
        self.base = f"http://127.0.0.1:{self.port}"
        self.url = f"{self.base}/hooks"
        self.session = requests.Session()
        self.session.trust_env = False
        self.body_size = 0  # of the last body it recorded (those without X-Service-Delivery)

    def records(self) -> list:
        return self.session.get(f"{self.base}/_records", timeout=10).json()

    def clear(self) -> None:
        self.records()

    def wait_for(self, expected: set, key, timeout: float) -> dict:
        """Receipt time of each expected id (``key`` reads the id from a record), waiting until
        all arrived or ``timeout`` seconds passed."""
        received = {}
        deadline = time.monotonic() + timeout
        while True:
            for at, header, body in self.records():
                if body is not None:
                    self.body_size = len(body.encode())
                delivery = key(header, body)
                if delivery in expected and delivery not in received:
                    received[delivery] = at
            if len(received) >= len(expected) or time.monotonic() > deadline:
                return received
            time.sleep(0.05)

    def load_alone(self, connections: int, count: int, body_size: int) -> dict:
        """The receiver's capacity with a raw-socket client in another process."""
        output = subprocess.run(
            [
                sys.executable,
                str(HERE / "webhook_receiver.py"),
                "load",
                self.url,
                f"--connections={connections}",
                f"--requests={count}",
                f"--body-size={body_size}",
            ],
            capture_output=True,
            check=True,
            timeout=120,
        )
        return json.loads(output.stdout)


def header_key(header, body):
    return header


def peer_key(header, body):
    if body is None:
        return None
    try:
        return json.loads(body)["object"]["event_id"]
    except (ValueError, KeyError, TypeError):
        return None


# --- the contenders --------------------------------------------------------------------------


class Contender:
    """One way of delivering: ``start``; ``fire`` (returns {delivery id: commit time}), ``pause``
    and ``resume`` the sending, as often as needed; ``stop``. ``worker`` is the process (and
    process group) of its Celery worker, if it has one; ``queue`` the queue it consumes."""

    name = ""
    key = staticmethod(header_key)
    worker: subprocess.Popen | None = None
    broker_url = ""
    queue = ""
    producer_cpu = 0.0  # CPU seconds of the producer during the last fire()
    pool = ""  # the Celery worker's pool, for those that have a worker
    body_size = 0  # bytes of a request body

    def start(self) -> None:
        pass

    def fire(self, count: int, rate: float) -> dict:
        raise NotImplementedError

    def pause(self) -> None:
        """Stop taking new work (the worker stops consuming its queue; what it holds finishes)."""
        self._control("cancel_consumer")

    def resume(self) -> None:
        self._control("add_consumer")

    def _control(self, command: str) -> None:
        from celery import Celery

        app = Celery("bench-control", broker=self.broker_url, set_as_current=False)
        try:
            replies = getattr(app.control, command)(self.queue, reply=True, timeout=5)
        finally:
            app.close()
        if not replies:
            raise RuntimeError(f"the worker did not answer {command}")

    def stop(self) -> None:
        if self.worker is not None:
            stop_process(self.worker)

    def diagnose(self) -> str:
        return ""


class Ours(Contender):
    """Events fired with ``docplatform.events.fire`` and delivered by our Celery worker."""

    name = "ours (docplatform)"

    def __init__(self, stack: ExitStack, logs: Path, args, receiver: Receiver):
        from django.contrib.auth import get_user_model

        from docplatform.models import Membership, Organization, Revision, Space
        from integrations.models import Integration
        from integrations.services.installations import installation_create

        self.stack, self.logs, self.args = stack, logs, args
        organization = Organization.objects.create(subdomain="bench", title="Bench")
        admin = get_user_model().objects.create(username="bench-admin")
        Membership.objects.create(organization=organization, user=admin, role="admin")
        space = Space.objects.create(organization=organization, title="Bench space")
        revision = Revision.objects.create(space=space, message="first")
        space.current_revision = revision
        space.save(update_fields=["current_revision"])
        self.installation = installation_create(
            user=admin,
            integration=Integration.objects.get(name="webhook"),
            organization=organization,
            space=space,
            configuration={"url": receiver.url, "space_content_updated": True},
        )
        if self.installation.status != "active":
            raise RuntimeError(f"the webhook installation is {self.installation.status}")
        self.organization, self.space = organization, space
        self.payload = {"spaceId": space.id, "revisionId": revision.id}
        self.broker_url = _redis_url(args.redis, args.redis_dbs[0])
        self.queue = "webhooks"
        self.body_size = len(self.sample_request()[0])

    def start(self) -> None:
        from django.db import connection

        env = {
            **os.environ,
            "DATABASE_URL": _database_url(self.args.postgres, connection.settings_dict["NAME"]),
            "CELERY_BROKER_URL": self.broker_url,
        }
        command = [str(Path(sys.executable).parent / "celery"), "-A", "docplatform", "worker"]
        command += ["-Q", OUR_QUEUES, *_worker_options(self.args, self.pool)]
        self.worker = start_process(
            self.stack, command, name="ours-worker", logs=self.logs, env=env, cwd=ROOT
        )

    def diagnose(self) -> str:
        return log_tail(self.logs, "ours-worker")

    def fire(self, count: int, rate: float) -> dict:
        from django.db import connection, transaction

        from docplatform import events
        from docplatform.events.models import Delivery

        committed = {}

        def fire_one(_):
            stamp = []
            with transaction.atomic():
                # Registered first, so it runs right after COMMIT, before the enqueueing hook.
                transaction.on_commit(lambda: stamp.append(time.time()))
                event = events.fire(
                    "space_content_updated",
                    organization=self.organization,
                    space=self.space,
                    **self.payload,
                )
            committed[event.pk] = stamp[0]

        producers = self.args.producers
        cpu = time.process_time()
        fire_schedule(
            fire_one,
            count=count,
            rate=rate,
            producers=producers,
            on_thread_exit=connection.close if producers > 1 else lambda: None,
        )
        self.producer_cpu = time.process_time() - cpu
        uuids = dict(
            Delivery.objects.filter(event_id__in=list(committed)).values_list(
                "event_id", "event_uuid"
            )
        )
        return {str(uuids[event_id]): at for event_id, at in committed.items()}

    def sample_request(self) -> tuple[bytes, dict, str]:
        """A body exactly as our worker sends it (built in memory: nothing is written), the
        headers that do not change per request, and the eventId inside the body."""
        from docplatform.events.models import Delivery, Event
        from webhooks.services.drain import request_body
        from webhooks.transport.sending import USER_AGENT

        event = Event(type="space_content_updated", payload=self.payload)
        delivery = Delivery(event=event, installation=self.installation, event_uuid=uuid.uuid4())
        headers = {
            "Content-Type": "application/json",
            "User-Agent": USER_AGENT,
            "X-Service-Event": event.type,
        }
        return request_body(delivery), headers, str(delivery.event_uuid)


class Bare(Contender):
    """The limit: signed POSTs straight from ``requests.Session`` threads, nothing else."""

    name = "bare requests.Session"

    def __init__(self, url: str, concurrency: int, sample: tuple[bytes, dict, str]):
        self.url = url
        self.template, self.headers, sample_id = sample
        self.sample_id = sample_id.encode()
        self.body_size = len(self.template)
        self.secret = ("whsec_" + uuid.uuid4().hex + uuid.uuid4().hex[:11]).encode()
        self.concurrency = concurrency
        self.work = queue.Queue()
        self.running = threading.Event()
        self.errors = []
        self.threads = []

    def pause(self) -> None:
        self.running.clear()

    def resume(self) -> None:
        self.running.set()

    def start(self) -> None:
        self.running.set()
        self.threads = []
        for _ in range(self.concurrency):
            thread = threading.Thread(target=self.send, daemon=True)
            thread.start()
            self.threads.append(thread)

    def send(self) -> None:
        """One sender thread: its own keep-alive session, one POST per id taken."""
        session = requests.Session()
        session.trust_env = False
        while self.running.wait() and (event_id := self.work.get()) is not None:
            try:
                body = self.template.replace(self.sample_id, event_id.encode())
                timestamp = str(int(time.time()))
                signature = hmac.new(
                    self.secret, timestamp.encode() + b"." + body, hashlib.sha256
                ).hexdigest()
                headers = {
                    **self.headers,
                    "X-Service-Signature": f"t={timestamp},v1={signature}",
                    "X-Service-Delivery": event_id,
                }
                response = session.post(self.url, data=body, headers=headers, timeout=(3, 10))
                response.content  # noqa: B018 - read the answer, as a real sender does
                if response.status_code != 200:
                    self.errors.append(response.status_code)
            except requests.RequestException as exc:
                self.errors.append(exc)
        session.close()

    def fire(self, count: int, rate: float) -> dict:
        committed = {}

        def fire_one(_):
            event_id = str(uuid.uuid4())
            committed[event_id] = time.time()
            self.work.put(event_id)

        fire_schedule(fire_one, count=count, rate=rate)
        return committed

    def stop(self) -> None:
        self.running.set()
        for _ in self.threads:
            self.work.put(None)
        for thread in self.threads:
            thread.join(timeout=10)

    def diagnose(self) -> str:
        return f"errors: {self.errors[:5]}"


class Peer(Contender):
    """django-webhook: model saves in the peer project, delivered by the peer's worker."""

    name = "peer (django-webhook 0.0.15)"
    key = staticmethod(peer_key)

    def __init__(self, stack: ExitStack, logs: Path, args, receiver: Receiver, payload: dict):
        self.stack, self.logs, self.args = stack, logs, args
        self.receiver, self.payload = receiver, payload
        self.python = str(PEER_VENV / "bin" / "python")
        self.database = args.database_prefix + PEER_DATABASE
        self.env = {
            "PATH": os.environ.get("PATH", ""),
            "PEER_DATABASE_URL": _database_url(args.postgres, self.database),
            "CELERY_BROKER_URL": _redis_url(args.redis, args.redis_dbs[1]),
            "PYTHONUNBUFFERED": "1",
        }
        self.broker_url = self.env["CELERY_BROKER_URL"]
        self.queue = "celery"

    def start(self) -> None:
        recreate_database(self.args.postgres, self.database)
        self.stack.callback(recreate_database, self.args.postgres, self.database, drop_only=True)
        self._run("manage.py", "migrate", "--no-input")
        self._run("bench_driver.py", "setup", f"--url={self.receiver.url}", "--secret=" + "k" * 43)
        command = [str(PEER_VENV / "bin" / "celery"), "-A", "peer_project", "worker"]
        command += ["-Q", "celery", *_worker_options(self.args, self.pool)]
        self.worker = start_process(
            self.stack, command, name="peer-worker", logs=self.logs, env=self.env, cwd=PEER_DIR
        )

    def diagnose(self) -> str:
        return log_tail(self.logs, "peer-worker")

    def _run(self, *arguments: str) -> None:
        """Run a command of the peer project with the peer's Python."""
        done = subprocess.run(
            [self.python, *arguments], cwd=PEER_DIR, env=self.env, capture_output=True, timeout=300
        )
        if done.returncode:
            raise RuntimeError(f"peer: {' '.join(arguments[:2])} failed:\n{done.stderr[-3000:]}")

    def fire(self, count: int, rate: float) -> dict:
        out = self.logs / "peer-fired.json"
        self._run(
            "bench_driver.py",
            "fire",
            f"--count={count}",
            f"--rate={rate}",
            f"--producers={self.args.producers}",
            f"--space-id={self.payload['spaceId']}",
            f"--revision-id={self.payload['revisionId']}",
            f"--out={out}",
        )
        result = json.loads(out.read_text())
        self.producer_cpu = result["cpu"]
        return result["committed"]


def _worker_options(args, pool: str) -> list[str]:
    return [
        f"--pool={pool}",
        f"--concurrency={args.concurrency}",
        "--loglevel=WARNING",
        "--without-gossip",
        "--without-mingle",
        "--without-heartbeat",
    ]


def _database_url(base: str, name: str) -> str:
    return urlsplit(base)._replace(path=f"/{name}").geturl()


def _redis_url(base: str, number: int) -> str:
    return urlsplit(base)._replace(path=f"/{number}").geturl()


# --- measuring -------------------------------------------------------------------------------


def percentile(values: list[float], fraction: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(len(ordered) * fraction))]


def start_profiler(args, contender: Contender, phase: str) -> subprocess.Popen | None:
    """py-spy on the contender's worker (all its processes) during a phase, with
    ``--profile DIR``: collapsed stacks in DIR/<contender>-<phase>.txt (flame graph tools and
    ``grep`` read them)."""
    if not args.profile or contender.worker is None:
        return None
    args.profile.mkdir(parents=True, exist_ok=True)
    output = args.profile / f"{contender.name.split()[0]}-{phase}.txt"
    command = [args.py_spy, "record", "--pid", str(contender.worker.pid), "--subprocesses"]
    command += ["--rate", "200", "--format", "raw", "--output", str(output), "--nonblocking"]
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    time.sleep(1.0)  # py-spy attaches
    return process


def stop_profiler(process: subprocess.Popen | None) -> None:
    if process is not None:
        process.send_signal(signal.SIGINT)
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            process.kill()


def run_contender(contender: Contender, receiver: Receiver, args) -> dict:
    """Start it, warm up, then the burst (rate, CPU) and the steady run (latency); stop it."""
    contender.start()
    try:
        return _measure(contender, receiver, args)
    except Exception as exc:
        raise RuntimeError(f"{contender.name}: {exc}\n{contender.diagnose()}") from exc
    finally:
        contender.stop()


def _measure(contender: Contender, receiver: Receiver, args) -> dict:
    timeout = 60 + args.events / 10
    groups = {"receiver": receiver.process.pid}
    if contender.worker is not None:
        groups["worker"] = contender.worker.pid
    this_process = "worker" if contender.worker is None else None  # bare: its threads are here
    missing = 0

    def deliver(count, rate):
        nonlocal missing
        committed = contender.fire(count, rate)
        received = receiver.wait_for(set(committed), contender.key, timeout)
        missing += len(committed) - len(received)
        return committed, received

    receiver.clear()
    warm_committed, warm_received = deliver(args.warmup, 0)  # also waits for the worker
    if len(warm_received) < len(warm_committed):
        raise RuntimeError("the warm-up deliveries did not all arrive")

    # End to end: fire a burst while the worker delivers.
    profiler = start_profiler(args, contender, "end-to-end")
    before = CpuSnapshot.take(groups, this_process)
    committed, received = deliver(args.events, 0)
    time.sleep(0.3)  # the last attempt's bookkeeping after its POST
    end_to_end_cpu = CpuSnapshot.take(groups, this_process).since(before)
    stop_profiler(profiler)
    if this_process is None:
        end_to_end_cpu["producer"] = contender.producer_cpu
    first = min(committed.values())
    end_to_end_rate = len(received) / (max(received.values(), default=first) - first or 1e-9)
    # How fast the producer fired meanwhile: end to end can be no faster.
    fired_rate = len(committed) / (max(committed.values()) - first or 1e-9)

    # Delivery alone: a backlog of committed, queued events, then the worker is let go.
    contender.pause()
    backlog = contender.fire(args.events, 0)
    time.sleep(1.0)  # what the worker held when paused is done
    profiler = start_profiler(args, contender, "delivery")
    before = CpuSnapshot.take(groups, this_process)
    resumed = time.time()
    contender.resume()
    drained = receiver.wait_for(set(backlog), contender.key, timeout)
    time.sleep(0.3)
    delivery_cpu = CpuSnapshot.take(groups, this_process).since(before)
    stop_profiler(profiler)
    missing += len(backlog) - len(drained)
    after_resume = [at for at in drained.values() if at >= resumed]
    # From the first receipt: the worker's consumer restart (about a second for Celery on
    # Redis, ours and the peer alike) is not delivery.
    first_receipt = min(after_resume, default=resumed)
    delivery_rate = (len(after_resume) - 1) / (
        max(after_resume, default=resumed) - first_receipt or 1e-9
    )

    # Latency: a steady rate far below every contender's capacity, so nothing queues.
    time.sleep(0.5)
    steady_committed, steady_received = deliver(args.steady_events, args.steady_rate)
    latencies = [steady_received[key] - steady_committed[key] for key in steady_received]
    return {
        "name": contender.name + (f" [{contender.pool}]" if contender.pool else ""),
        "kind": contender.name.split()[0],
        "pool": contender.pool,
        "body_size": contender.body_size or receiver.body_size,
        "missing": missing,
        "end_to_end_rate": end_to_end_rate,
        "fired_rate": fired_rate,
        "end_to_end_cpu": _per_delivery(end_to_end_cpu, len(received)),
        "delivery_rate": delivery_rate,
        "delivery_cpu": _per_delivery(delivery_cpu, len(after_resume)),
        "p50": percentile(latencies, 0.5) * 1000 if latencies else float("nan"),
        "p99": percentile(latencies, 0.99) * 1000 if latencies else float("nan"),
    }


def _per_delivery(cpu: dict, count: int) -> dict:
    """CPU milliseconds per delivery of each part; the machine's busy share as it is."""
    return {
        part: value if part == "machine busy" else value * 1000 / max(count, 1)
        for part, value in cpu.items()
    }


def report(results: list[dict], receiver_alone: dict, args, machine: str) -> str:
    """The results as Markdown: per worker pool, the comparison and the goals; then where the
    CPU went."""
    lines = [
        f"machine: {machine}; load average {args.load_at_start:.2f} at the start, "
        f"{os.getloadavg()[0]:.2f} at the end",
        f"{args.events} events per contender and phase (after {args.warmup} to warm up); "
        f"Celery workers --concurrency {args.concurrency} with each pool, the bare client "
        f"{args.concurrency} threads; latency of {args.steady_events} events fired at "
        f"{args.steady_rate:g}/s",
    ]
    bare = next((result for result in results if result["kind"] == "bare"), None)
    for pool in args.pools:
        ours = next((r for r in results if r["kind"] == "ours" and r["pool"] == pool), None)
        rows = [bare] if bare else []
        rows += [r for r in results if r["pool"] == pool]

        def ratio(result, rate, ours=ours):
            return f"{ours[rate] / result[rate]:.2f}" if ours and result[rate] else "-"

        lines += [
            "",
            f"Workers with `--pool {pool}`:",
            "",
            "| contender | body bytes | deliveries/s | end to end/s (fired/s) | p50 ms | p99 ms "
            "| ours ÷ this | ours ÷ this, end to end |",
            "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
        ]
        for result in rows:
            missing = f" ({result['missing']} missing)" if result["missing"] else ""
            lines.append(
                f"| {result['name']}{missing} | {result['body_size']} "
                f"| {result['delivery_rate']:.0f} "
                f"| {result['end_to_end_rate']:.0f} ({result['fired_rate']:.0f}) "
                f"| {result['p50']:.1f} | {result['p99']:.1f} "
                f"| {ratio(result, 'delivery_rate')} | {ratio(result, 'end_to_end_rate')} |"
            )
        goals = []
        if ours and bare:
            share = ours["delivery_rate"] / bare["delivery_rate"]
            least = BARE_SHARE_GOAL[pool]
            verdict = "met" if share >= least else "not met"
            goals.append(
                f"deliveries/s {share:.2f} of the bare client's (goal: at least {least:.2f}, "
                f"{verdict})"
            )
        peer = next((r for r in rows if r["kind"] == "peer"), None)
        if ours and peer:
            for key, label, better in (
                ("delivery_rate", "deliveries/s", "above"),
                ("end_to_end_rate", "end to end/s", "above"),
                ("p50", "p50 latency", "at most"),
                ("p99", "p99 latency", "at most"),
            ):
                times = ours[key] / peer[key] if peer[key] else float("nan")
                met = times > 1 if better == "above" else times <= 1
                verdict = "met" if met else "not met"
                goals.append(f"{label} {times:.2f} times the peer's (goal: {better} 1, {verdict})")
        if goals:
            lines += ["", f"Ours with `--pool {pool}`: " + "; ".join(goals) + "."]
    lines += [
        "",
        f"The receiver alone ({receiver_alone['connections']} connections, "
        f"{args.receiver_body_size}-byte bodies): {receiver_alone['rate']:.0f} requests/s, "
        f"p50 {receiver_alone['p50_ms']:.1f} ms, p99 {receiver_alone['p99_ms']:.1f} ms.",
    ]

    parts = ["worker", "receiver", "postgres", "redis"]
    lines += [
        "",
        "CPU ms per delivery (PostgreSQL and Redis: all their processes on the machine) and how "
        "busy the machine was; 'delivery': draining the backlog, 'end to end': firing and "
        "delivering at once (producer: the firing process):",
        "",
        "| contender | phase | " + " | ".join(parts) + " | producer | machine busy |",
        "| --- | --- | " + " | ".join("---:" for _ in parts) + " | ---: | ---: |",
    ]
    for result in results:
        for phase in ("delivery", "end_to_end"):
            cpu = result[f"{phase}_cpu"]
            cells = [f"{cpu[part]:.2f}" if part in cpu else "-" for part in [*parts, "producer"]]
            lines.append(
                f"| {result['name']} | {phase.replace('_', ' ')} | "
                + " | ".join(cells)
                + f" | {cpu['machine busy'] * 100:.0f} % |"
            )
    return "\n".join(lines)


def machine_description() -> str:
    model = "unknown CPU"
    with open("/proc/cpuinfo") as cpuinfo:
        for line in cpuinfo:
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    return f"{os.cpu_count()} cores, {model}"


# --- setting up ------------------------------------------------------------------------------


def ensure_peer_venv() -> None:
    """Create ``.venv-peer`` with the peer's requirements on first run (or when they change)."""
    stamp = PEER_VENV / ".bench-requirements"
    wanted = "\n".join(PEER_REQUIREMENTS)
    if stamp.exists() and stamp.read_text() == wanted:
        return
    print(f"creating {PEER_VENV.relative_to(ROOT)} (django-webhook and its requirements)")
    subprocess.run([sys.executable, "-m", "venv", str(PEER_VENV)], check=True)
    pip = [str(PEER_VENV / "bin" / "python"), "-m", "pip", "install", "--quiet"]
    subprocess.run([*pip, "--upgrade", "pip"], check=True)
    subprocess.run([*pip, *PEER_REQUIREMENTS], check=True)
    stamp.write_text(wanted)


def ensure_py_spy(args) -> None:
    """Install py-spy into ``.venv-tools`` when ``--profile`` needs it and it is missing."""
    if Path(args.py_spy).exists():
        return
    print(f"installing py-spy into {TOOLS_VENV.relative_to(ROOT)}")
    subprocess.run([sys.executable, "-m", "venv", str(TOOLS_VENV)], check=True)
    pip = [str(TOOLS_VENV / "bin" / "python"), "-m", "pip", "install", "--quiet", "py-spy"]
    subprocess.run(pip, check=True)
    args.py_spy = str(TOOLS_VENV / "bin" / "py-spy")


def recreate_database(postgres: str, name: str, *, drop_only=False) -> None:
    import psycopg

    with psycopg.connect(postgres, autocommit=True) as connection:
        connection.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        if not drop_only:
            connection.execute(f'CREATE DATABASE "{name}"')


def claim_redis_databases(stack: ExitStack, base: str, numbers: list[int]) -> None:
    """Refuse Redis databases that hold keys; empty ours at the end."""
    import redis

    for number in numbers:
        client = redis.Redis.from_url(_redis_url(base, number))
        if client.dbsize():
            raise SystemExit(
                f"Redis database {number} is not empty: choose free ones with --redis-dbs"
            )
        stack.callback(client.close)
        stack.callback(client.flushdb)


def production_keys() -> None:
    """Keys of this run's own: with DEBUG off the platform derives none (its workers, started
    from this environment, share them)."""
    os.environ.setdefault("SECRET_KEY", secrets.token_urlsafe(40))
    os.environ.setdefault(
        "ENCRYPTION_KEYS", base64.urlsafe_b64encode(secrets.token_bytes(32)).decode()
    )
    os.environ.setdefault("RUNTIME_SIGNING_KEY", secrets.token_urlsafe(32))


def setup_django(stack: ExitStack, args) -> None:
    """Our settings from the environment, then a database of the benchmark's own."""
    database = args.database_prefix + OURS_DATABASE
    os.environ["DATABASE_URL"] = _database_url(args.postgres, database)
    os.environ["CELERY_BROKER_URL"] = _redis_url(args.redis, args.redis_dbs[0])
    os.environ["WEBHOOK_ALLOWED_NETWORKS"] = "127.0.0.0/8"
    os.environ["LOG_LEVEL"] = "WARNING"
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "docplatform.settings")
    production_keys()
    import django

    django.setup()
    # Read by Celery before any app's own broker setting: the settings hold it now.
    del os.environ["CELERY_BROKER_URL"]
    from django.db import connection, connections

    connection.settings_dict["TEST"]["NAME"] = database
    stack.callback(recreate_database, args.postgres, database, drop_only=True)
    stack.callback(connections.close_all)
    connection.creation.create_test_db(verbosity=0, autoclobber=True, serialize=False)


def parse_args(argv=None):
    parser = argparse.ArgumentParser(
        description="Webhook delivery: ours beside a bare requests.Session and django-webhook."
    )
    parser.add_argument("--events", type=int, default=2000, help="events in each measured phase")
    parser.add_argument("--warmup", type=int, default=200, help="warm-up events")
    # threads beat prefork here, for ours and the peer alike (benchmarks/RESULTS.md)
    parser.add_argument("--concurrency", type=int, default=8, help="worker slots / threads")
    parser.add_argument(
        "--pools",
        default="threads,prefork",
        help="the Celery pools to run ours and the peer with, each in turn (threads, prefork)",
    )
    parser.add_argument("--producers", type=int, default=1, help="threads firing events")
    parser.add_argument("--steady-events", type=int, default=400, help="events timed for latency")
    parser.add_argument("--steady-rate", type=float, default=20.0, help="their rate, per second")
    parser.add_argument(
        "--contenders", default="bare,ours,peer", help="which to run, in this order"
    )
    parser.add_argument("--postgres", default="postgres://postgres@127.0.0.1:5432/postgres")
    parser.add_argument("--redis", default="redis://127.0.0.1:6379/0")
    parser.add_argument(
        "--redis-dbs",
        type=lambda value: [int(n) for n in value.split(",")],
        default=[12, 13],
        help="two empty Redis database numbers: ours,peer",
    )
    parser.add_argument(
        "--database-prefix",
        default="",
        help="before the names of the PostgreSQL databases it creates and drops",
    )
    parser.add_argument("--keep-logs", action="store_true", help="keep the processes' logs")
    parser.add_argument(
        "--profile", type=Path, help="record each worker with py-spy during the burst, into DIR"
    )
    parser.add_argument(
        "--py-spy",
        default=shutil.which("py-spy") or str(TOOLS_VENV / "bin" / "py-spy"),
        help="the py-spy executable (by default installed into benchmarks/.venv-tools)",
    )
    args = parser.parse_args(argv)
    args.contenders = [name.strip() for name in args.contenders.split(",") if name.strip()]
    args.pools = [name.strip() for name in args.pools.split(",") if name.strip()]
    if not args.pools or set(args.pools) - {"threads", "prefork"}:
        parser.error("--pools: threads, prefork or both")
    unknown = set(args.contenders) - {"ours", "bare", "peer"}
    if unknown:
        parser.error(f"unknown contenders: {', '.join(sorted(unknown))}")
    for url in (args.postgres, args.redis):
        if urlsplit(url).hostname not in ("127.0.0.1", "localhost"):
            parser.error("PostgreSQL and Redis must be on 127.0.0.1")
    return args


def main(argv=None) -> None:
    args = parse_args(argv)
    for signum in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(signum, _raise_interrupt)  # so the clean-up below always runs
    machine = machine_description()
    args.load_at_start = os.getloadavg()[0]
    if "peer" in args.contenders:
        ensure_peer_venv()
    if args.profile:
        ensure_py_spy(args)
    with ExitStack() as stack:
        logs = Path(tempfile.mkdtemp(prefix="webhook-bench-"))
        if not args.keep_logs:
            stack.callback(_remove_tree, logs)
        claim_redis_databases(stack, args.redis, args.redis_dbs)
        receiver = Receiver(stack, logs)
        args.receiver_body_size = 160
        receiver_alone = receiver.load_alone(32, 20_000, args.receiver_body_size)
        print(
            f"receiver alone: {receiver_alone['rate']:.0f} requests/s "
            f"(p50 {receiver_alone['p50_ms']:.2f} ms)",
            flush=True,
        )
        setup_django(stack, args)
        ours = Ours(stack, logs, args, receiver)
        available = {
            "ours": lambda: ours,
            "bare": lambda: Bare(receiver.url, args.concurrency, ours.sample_request()),
            "peer": lambda: Peer(stack, logs, args, receiver, ours.payload),
        }
        results = []
        if "bare" in args.contenders:
            print("running bare ...", flush=True)
            results.append(run_contender(available["bare"](), receiver, args))
        for pool in args.pools:
            for name in [name for name in args.contenders if name != "bare"]:
                print(f"running {name} with --pool {pool} ...", flush=True)
                contender = available[name]()
                contender.pool = pool
                results.append(run_contender(contender, receiver, args))
        print()
        print(report(results, receiver_alone, args, machine))
        if args.keep_logs:
            print(f"\nlogs: {logs}")


def _remove_tree(path: Path) -> None:
    shutil.rmtree(path, ignore_errors=True)


if __name__ == "__main__":
    try:
        main()
    except KeyboardInterrupt:
        sys.exit("interrupted: everything it started was stopped and removed")
