"""An endpoint's limits hold across every worker process: 4 real Celery worker processes (a
prefork worker of concurrency 4) drain deliveries to real local receivers, which count what
reaches them. The limits live in Redis when ``TEST_REDIS_URL`` names one (under a key prefix of
each test's own), else in the database."""

import os
import signal
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from datetime import timedelta
from email.utils import format_datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from django.core.exceptions import ValidationError
from django.db import transaction
from django.utils import timezone

from docplatform.events.models import Delivery
from docplatform.models import Revision
from docplatform.revisions import space_content_update
from integrations.operators import OPERATOR
from integrations.services.installations import installation_configure
from tests import redis_keys
from tests.factories import SpaceFactory
from tests.processes import database_url
from webhooks.models import DeliveryAttempt
from webhooks.transport import endpoint_slots, limit_stores, limits

pytestmark = [pytest.mark.slow, pytest.mark.usefixtures("transactional_db", "webhook_settings")]

REPO = Path(__file__).resolve().parents[2]


@dataclass
class Counting:
    """A receiver answering each POST after ``delay`` seconds (by path), counting the
    requests open at once and when each arrived; a path's ``plan`` answers in turn."""

    server: ThreadingHTTPServer | None = None
    delays: dict = field(default_factory=dict)
    plans: dict = field(default_factory=dict)
    open_now: dict = field(default_factory=dict)
    most_open: dict = field(default_factory=dict)
    arrivals: dict = field(default_factory=dict)
    answered: dict = field(default_factory=dict)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def url(self, path: str) -> str:
        return f"http://127.0.0.1:{self.server.server_port}{path}"

    def count(self, path: str) -> int:
        with self.lock:
            return len(self.arrivals.get(path, []))

    def wait_for(self, path: str, count: int, timeout: float) -> None:
        deadline = time.monotonic() + timeout
        while self.count(path) < count:
            assert time.monotonic() < deadline, f"{path}: {self.count(path)} of {count} came"
            time.sleep(0.05)

    def handle(self, path: str) -> tuple[int, dict]:
        with self.lock:
            self.arrivals.setdefault(path, []).append(time.monotonic())
            self.open_now[path] = self.open_now.get(path, 0) + 1
            self.most_open[path] = max(self.most_open.get(path, 0), self.open_now[path])
            plan = self.plans.get(path) or [(200, {})]
            answer = plan.pop(0) if len(plan) > 1 else plan[0]
        time.sleep(self.delays.get(path, 0.0))
        with self.lock:
            self.open_now[path] -= 1
            self.answered.setdefault(path, []).append(time.monotonic())
        return answer


@pytest.fixture
def counting():
    receiver = Counting()

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def do_POST(self):
            self.rfile.read(int(self.headers.get("Content-Length") or 0))
            status, headers = receiver.handle(self.path)
            self.send_response(status)
            for name, value in headers.items():
                self.send_header(name, value)
            self.send_header("Content-Length", "0")
            self.end_headers()

        def log_message(self, format, *args):
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    server.request_queue_size = 256
    receiver.server = server
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield receiver
    server.shutdown()
    server.server_close()


@pytest.fixture
def limits_store():
    """Where the workers hold the limits (their environment): TEST_REDIS_URL under a key
    prefix of this test's own (its keys deleted at the end) when it is set, else the
    database."""
    if not os.environ.get("TEST_REDIS_URL"):
        yield {"WEBHOOK_LIMITS_URL": "database"}
        return
    url, prefix = redis_keys.redis_url(), redis_keys.new_prefix("limits")
    yield {"WEBHOOK_LIMITS_URL": url, "WEBHOOK_LIMITS_KEY_PREFIX": prefix}
    redis_keys.delete_keys(url, prefix)


@pytest.fixture
def workers(private_broker, limits_store, tmp_path):
    """Start a prefork worker of 4 processes on the private broker; stopped at the end."""
    started = []

    def start(**environment):
        env = {
            **os.environ,
            **private_broker.env,
            "DJANGO_SETTINGS_MODULE": "docplatform.settings",
            "DATABASE_URL": database_url(),
            "WEBHOOK_ALLOWED_NETWORKS": "127.0.0.0/8",
            **limits_store,
            "WEBHOOK_RETRY_BASE_DELAY": "0.1",
            "WEBHOOK_RESPONSE_TIMEOUT": "5",
            # Small batches, so that the backlog is shared by 4 drains (one per process),
            # and no bound of a process's own below the endpoints' limits.
            "WEBHOOK_BATCH_SIZE": "10",
            "WEBHOOK_PARALLEL_DRAINS": "4",
            "WEBHOOK_RECEIVER_CONCURRENCY": "100",
            **environment,
        }
        with open(tmp_path / f"worker{len(started)}.log", "wb") as log:
            process = subprocess.Popen(
                [sys.executable, "-m", "celery", "-A", "docplatform", "worker", "-Q", "webhooks",
                 "--pool", "prefork", "--concurrency", "4", "--loglevel", "WARNING",
                 "--without-mingle", "--without-gossip", "--without-heartbeat"],
                cwd=REPO, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True,
            )  # fmt: skip
        started.append(process)
        return process

    yield start
    for process in started:  # killed: a drain would run on for its WEBHOOK_DRAIN_SECONDS
        os.killpg(process.pid, signal.SIGKILL)
        process.wait(timeout=10)


@pytest.fixture
def endpoint(organization, install_webhook, counting):
    """A new space with a webhook installation posting to ``path`` with ``configuration``."""

    def make(path: str, **configuration):
        space = SpaceFactory(organization=organization)
        space.current_revision = Revision.objects.create(space=space, message="first")
        space.save()
        installation = install_webhook(
            space=space, url=counting.url(path), space_content_updated=True, **configuration
        )
        return space, installation

    return make


def settled(deliveries, timeout: float) -> None:
    """Wait until every one of ``deliveries`` succeeded (each attempt is settled a moment
    after its receiver answered)."""
    deadline = time.monotonic() + timeout
    while deliveries.exclude(status="succeeded").exists():
        assert time.monotonic() < deadline, list(deliveries.values_list("status", "last_error"))
        time.sleep(0.05)


def fire(spaces, count: int) -> None:
    """``count`` events in each space, committed together: one drain is queued."""
    with transaction.atomic():
        for _ in range(count):
            for space in spaces:
                space_content_update(space=space, pages=[{"path": "p", "title": "P"}])


def test_at_most_max_in_flight_at_once_across_four_worker_processes(counting, endpoint, workers):
    limited, limited_installation = endpoint("/limited", max_in_flight=10)
    wider, _ = endpoint("/wider", max_in_flight=40)
    counting.delays = {"/limited": 0.3, "/wider": 0.3}
    fire([limited, wider], 80)

    workers()
    held_back = set()
    deadline = time.monotonic() + 45
    while counting.count("/limited") < 80 or counting.count("/wider") < 80:
        assert time.monotonic() < deadline, (counting.count("/limited"), counting.count("/wider"))
        held_back |= set(
            Delivery.objects.filter(
                installation=limited_installation, last_error__startswith="held back: "
            ).values_list("last_error", flat=True)
        )
        time.sleep(0.1)

    settled(Delivery.objects.all(), timeout=10)
    print(f"most in flight: {counting.most_open}")
    assert counting.most_open["/limited"] <= 10
    assert counting.most_open["/limited"] >= 8  # the limit is what bounds it
    # The other endpoint, limited to 40, got more than 10 at once: several processes drained
    # together (a drain holds 10 at most here).
    assert counting.most_open["/wider"] > 10
    assert "held back: endpoint limit 10 in flight" in held_back
    assert counting.count("/limited") == 80  # each once: held back, not failed


def test_at_most_max_per_second_plus_one_second_burst(counting, endpoint, workers):
    rate, total = 50, 250
    space, installation = endpoint("/rate", max_per_second=rate)
    fire([space], total)

    workers()
    counting.wait_for("/rate", total, timeout=40)

    arrivals = sorted(counting.arrivals["/rate"])
    span = arrivals[-1] - arrivals[0]
    most_in_a_second = max(
        sum(1 for later in arrivals[i:] if later - at < 1.0) for i, at in enumerate(arrivals)
    )
    print(f"{total} in {span:.2f} s; at most {most_in_a_second} in one second")
    # A bucket of one second's worth: over any window of T seconds at most rate * T + rate
    # (the requests timed here, a little after the workers took their tokens: some slack).
    assert most_in_a_second <= 2 * rate + 5
    assert total <= rate * span + rate + 5
    assert span >= (total - rate) / rate * 0.9
    settled(Delivery.objects.filter(installation=installation), timeout=10)
    assert not DeliveryAttempt.objects.exclude(outcome="succeeded").exists()  # none failed


def test_a_429_with_retry_after_is_waited_for_when_opted_in(counting, endpoint, workers):
    space, installation = endpoint("/busy", retry_after=True)
    counting.plans["/busy"] = [(429, {"Retry-After": "2"}), (200, {})]
    fire([space], 1)

    workers()
    counting.wait_for("/busy", 2, timeout=30)

    first_answered = counting.answered["/busy"][0]
    second_arrived = counting.arrivals["/busy"][1]
    print(f"the retry came {second_arrived - first_answered:.2f} s after the 429")
    assert second_arrived - first_answered >= 2.0
    settled(Delivery.objects.filter(installation=installation), timeout=10)
    first, second = DeliveryAttempt.objects.filter(delivery__installation=installation)
    assert (first.status_code, first.outcome) == (429, "retry")
    assert first.next_delay >= 2.0
    assert "Retry-After 2 s" in first.error
    assert (second.status_code, second.outcome) == (200, "succeeded")


# --- the pieces, against the store the run uses (Redis or the database) ---------------------


def test_invalid_limits_are_configuration_errors(install_webhook, space, counting):
    installation = install_webhook(
        space=space,
        url=counting.url("/x"),
        space_content_updated=True,
        max_in_flight=0.5,
        max_per_second=-3,
    )
    assert installation.status == "pending"
    assert {
        "path": "configuration.max_in_flight",
        "message": "must be a whole number, 1 or more",
    } in installation.status_reasons
    assert {
        "path": "configuration.max_per_second",
        "message": "must be a number above 0",
    } in installation.status_reasons
    with pytest.raises(ValidationError) as refused:
        installation_configure(
            user=OPERATOR, installation=installation, changes={"max_in_flight": "ten"}
        )
    assert "max_in_flight" in str(refused.value)
    installation = installation_configure(
        user=OPERATOR,
        installation=installation,
        changes={"max_in_flight": 3, "max_per_second": 0.5},
    )
    assert installation.status == "active"
    assert limits.limits_of(installation.configuration) == limits.Limits(3, 0.5)


@pytest.fixture(params=["database", "redis"])
def store(request, settings, install_webhook, space, counting):
    """Each store of the limits, in this process (Redis: TEST_REDIS_URL, under a key prefix
    of this test's own, its keys deleted at the end), and an endpoint."""
    if request.param == "redis":
        url, prefix = redis_keys.redis_url(), redis_keys.new_prefix("limits")
        settings.WEBHOOK_LIMITS_KEY_PREFIX = prefix
        request.addfinalizer(lambda: redis_keys.delete_keys(url, prefix))
    else:
        url = "database"
    settings.WEBHOOK_LIMITS_URL = url
    installation = install_webhook(space=space, url=counting.url("/x"), space_content_updated=True)
    return limit_stores.store(), str(installation.pk)


def test_a_slot_never_given_back_expires_with_its_lease(store, settings):
    settings.WEBHOOK_RESPONSE_TIMEOUT = 0.2  # a lease of 2.2 s
    store, endpoint = store
    two = limits.Limits(max_in_flight=2, max_per_second=None)
    assert len(store.acquire(endpoint, two, 3, holder="killed").leases) == 2
    refused = store.acquire(endpoint, two, 1, holder="alive")
    assert (refused.leases, refused.held) == ([], limits.IN_FLIGHT)
    assert refused.reason(two) == "held back: endpoint limit 2 in flight"
    time.sleep(limits.lease_seconds() + 0.1)
    assert len(store.acquire(endpoint, two, 2, holder="alive").leases) == 2


def test_the_bucket_and_the_pause(store):
    store, endpoint = store
    rate = limits.Limits(max_in_flight=100, max_per_second=5)
    first = store.acquire(endpoint, rate, 8, holder="a")
    assert (len(first.leases), first.held) == (5, limits.RATE)  # one second's worth at once
    assert 0.1 < first.wait <= 0.2  # the next token
    store.release(endpoint, first.leases)
    time.sleep(0.45)
    assert len(store.acquire(endpoint, rate, 8, holder="a").leases) == 2  # 2 in 0.45 s
    store.pause(endpoint, 1.0)
    paused = store.acquire(endpoint, rate, 1, holder="a")
    assert (paused.leases, paused.held) == ([], limits.PAUSED)
    assert 0.5 < paused.wait <= 1.0
    assert "429 Retry-After" in paused.reason(rate)


@pytest.fixture
def roomy_waiting(monkeypatch):
    """A holder counts as waiting for 1 s after it was held back, not 0.25: the steps below
    run one after the other within that (a busy machine took over 0.25 s between two of
    them in a full run, and the waiting holder was already forgotten)."""
    for module in (limits, limit_stores):
        monkeypatch.setattr(module, "WAITER_SECONDS", 1.0)


@pytest.mark.usefixtures("roomy_waiting")
def test_drains_waiting_for_an_endpoint_share_its_slots(store):
    store, endpoint = store
    ten = limits.Limits(max_in_flight=10, max_per_second=None)
    first = store.acquire(endpoint, ten, 25, holder="a")
    assert (len(first.leases), first.held) == (10, limits.IN_FLIGHT)  # alone: every slot
    assert store.acquire(endpoint, ten, 25, holder="b").leases == []  # b now waits
    store.release(endpoint, first.leases)
    # a gives its slots back and asks again at once: it gets its share, b gets the rest.
    assert len(store.acquire(endpoint, ten, 25, holder="a").leases) == 5
    second = store.acquire(endpoint, ten, 25, holder="b")
    assert (len(second.leases), second.held) == (5, limits.IN_FLIGHT)
    assert store.acquire(endpoint, ten, 1, holder="c").leases == []  # full: c waits too
    store.release(endpoint, second.leases)
    # Three wait now: b, at 0 of its share of 4, gets 4 of the 5 free; c gets the last one.
    third = store.acquire(endpoint, ten, 25, holder="b")
    fourth = store.acquire(endpoint, ten, 25, holder="c")
    assert (len(third.leases), len(fourth.leases)) == (4, 1)
    # Once the others stopped asking, a lone holder gets every free slot again.
    store.release(endpoint, third.leases + fourth.leases)
    time.sleep(limits.WAITER_SECONDS + 0.05)
    assert len(store.acquire(endpoint, ten, 25, holder="d").leases) == 5


@pytest.mark.usefixtures("roomy_waiting")
def test_a_drain_passes_its_slots_on_within_its_share(store):
    _, endpoint = store
    ten = limits.Limits(max_in_flight=10, max_per_second=None)
    a, b = endpoint_slots.DrainSlots(), endpoint_slots.DrainSlots()
    taken, _ = a.take(endpoint, ten, 25)
    assert len(taken) == 10  # alone: every slot, each passed on to its next POST
    assert all(a.may_pass(endpoint, ten, slot) for slot in taken)
    assert b.take(endpoint, ten, 25)[0] == []  # b waits
    # a asks for more: it learns that b waits; its share is 5, so its slots go back until it
    # holds no more.
    grant = a.take(endpoint, ten, 5)[1]
    assert (grant.held, grant.others) == (limits.IN_FLIGHT, 1)
    assert not a.may_pass(endpoint, ten, taken[0])
    for slot in taken[:5]:
        a.ended(endpoint, slot)
    a.give_back_unused()
    assert all(a.may_pass(endpoint, ten, slot) for slot in taken[5:])
    b_taken = b.take(endpoint, ten, 25)[0]
    assert len(b_taken) == 5
    # A slot older than PASS_SECONDS is not passed on: its lease may not outlive a POST.
    old = endpoint_slots.Slot(taken[5].lease, time.monotonic() - endpoint_slots.PASS_SECONDS)
    assert not a.may_pass(endpoint, ten, old)
    # Nor is one of an endpoint with a rate limit (each POST spends a token).
    assert not a.may_pass(endpoint, limits.Limits(10, 50), taken[5])
    # A receiver that asked to wait (429 Retry-After) gets nothing passed on meanwhile, from
    # this drain or, once the store told it, from another.
    a.pause(endpoint, 0.3)
    assert not a.may_pass(endpoint, ten, taken[5])
    assert b.take(endpoint, ten, 1)[1].held == limits.PAUSED
    assert not any(b.may_pass(endpoint, ten, slot) for slot in b_taken)
    time.sleep(0.3)  # the pause is over
    assert a.may_pass(endpoint, ten, taken[5])


def test_a_fair_count():
    share = dict(max_in_flight=10)
    assert limits.fair_count(25, free=10, mine=0, others=0, **share) == 10
    assert limits.fair_count(3, free=10, mine=0, others=3, **share) == 3
    assert limits.fair_count(25, free=10, mine=0, others=3, **share) == 3  # ceil(10 / 4)
    assert limits.fair_count(25, free=7, mine=2, others=1, **share) == 3  # a share of 5
    assert limits.fair_count(25, free=0, mine=0, others=1, **share) == 0
    assert limits.fair_count(25, free=3, mine=9, others=2, **share) == 0


def test_retry_after_in_seconds_or_a_date_up_to_a_minute(settings):
    settings.WEBHOOK_RETRY_AFTER_MAX = 60.0
    soon = timezone.now() + timedelta(seconds=30)
    assert limits.retry_after({"Retry-After": "2"}) == 2.0
    assert limits.retry_after({"retry-after": "3600"}) == 60.0
    assert 28 < limits.retry_after({"Retry-After": format_datetime(soon, usegmt=True)}) <= 30
    assert limits.retry_after({"Retry-After": "Wed, 21 Oct 2015 07:28:00 GMT"}) == 0.0
    assert limits.retry_after({"Retry-After": "soon"}) is None
    assert limits.retry_after({}) is None
