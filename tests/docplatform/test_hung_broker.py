"""A broker that hangs or refuses never blocks a request or a command, nor another process's
deliveries; once it is back, the events are delivered, each once.

Real parts: fake brokers on 127.0.0.1 (one accepts connections and never answers, one
refuses them), the web server in a process of its own (gunicorn, one worker of two threads),
a Celery worker process on the real Redis (``TEST_REDIS_URL``, under a key prefix of these
tests' own; skipped without it), and a local webhook receiver.
"""

import json
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass

import pytest
import requests
from django.utils import timezone

from docplatform.celery import app
from docplatform.events.models import Delivery, DrainRequest
from docplatform.events.outbox import deliveries_sweep
from docplatform.models import Revision
from docplatform.revisions import space_content_update
from docplatform.services import api_token_create
from integrations.models import Integration
from integrations.services.installations import installation_create
from tests.factories import SpaceFactory
from tests.network import SilentServer, free_port
from tests.processes import BIN, manage_py, platform_env, start, stop
from tests.redis_keys import delete_keys, new_prefix, redis_url

LATE = 5.0  # seconds: a request slower than this is hung
#: How long the hung web process's publish waits on its broker (seconds).
HUNG_PUBLISH = 3.0


@pytest.fixture
def silent_broker():
    broker = SilentServer()
    yield broker
    broker.close()


def broker_url(scheme: str, port: int) -> str:
    return f"{scheme}://127.0.0.1:{port}/" + ("0" if scheme == "redis" else "")


@dataclass
class RedisBroker:
    url: str
    prefix: str


@pytest.fixture
def redis_back():
    """The broker once it is back: TEST_REDIS_URL, its keys under a prefix of this test's
    own (deleted at the end)."""
    broker = RedisBroker(redis_url(), new_prefix("hung-broker"))
    yield broker
    delete_keys(broker.url, broker.prefix)


@contextmanager
def publishing_to(url: str, prefix: str = ""):
    """This test process's Celery app publishing to ``url`` (its keys under ``prefix``)."""
    conf = app.conf
    saved = conf.broker_write_url, conf.broker_transport, conf.broker_transport_options
    conf.broker_write_url, conf.broker_transport = url, None  # (not the file-system one)
    conf.broker_transport_options = {"socket_timeout": 1.0, "socket_connect_timeout": 1.0}
    if prefix:
        conf.broker_transport_options["global_keyprefix"] = prefix
    app._pool = None
    app.amqp._producer_pool = None
    try:
        yield
    finally:
        conf.broker_write_url, conf.broker_transport, conf.broker_transport_options = saved
        app._pool = None
        app.amqp._producer_pool = None


@contextmanager
def web_server(tmp_path, **environment):
    """gunicorn serving the platform: one worker process of two threads, so two hung requests
    would take every thread."""
    port = free_port()
    log_path = tmp_path / f"web-{port}.log"
    env = platform_env(
        PLATFORM_URL=f"http://localhost:{port}",
        INTEGRATIONS_URL=f"http://127.0.0.1:{port}",
        LOG_LEVEL="WARNING",
        WEBHOOK_ALLOWED_NETWORKS="127.0.0.0/8",
        **environment,
    )
    command = [str(BIN / "gunicorn"), "--bind", f"127.0.0.1:{port}", "--workers", "1",
               "--threads", "2", "--timeout", "120", "docplatform.wsgi"]  # fmt: skip
    process = start(command, env, log_path)
    base = f"http://localhost:{port}"
    try:
        deadline = time.monotonic() + 30
        while True:
            assert process.poll() is None, log_path.read_text()
            try:
                requests.get(f"{base}/api/v1/me/", timeout=10)
                break
            except requests.ConnectionError:
                assert time.monotonic() < deadline, "the web server did not start"
                time.sleep(0.1)
        yield base, log_path
    finally:
        stop(process)


@contextmanager
def webhook_worker(tmp_path, broker: RedisBroker):
    env = platform_env(
        CELERY_BROKER_URL=broker.url,
        CELERY_BROKER_KEY_PREFIX=broker.prefix,
        WEBHOOK_LIMITS_KEY_PREFIX=broker.prefix,
        WEBHOOK_ALLOWED_NETWORKS="127.0.0.0/8",
        LOG_LEVEL="WARNING",
    )
    command = [sys.executable, "-m", "celery", "-A", "docplatform", "worker", "-Q", "webhooks",
               "--pool", "threads", "--concurrency", "4", "--without-mingle",
               "--without-gossip", "--loglevel", "WARNING"]  # fmt: skip
    process = start(command, env, tmp_path / "worker.log")
    try:
        with publishing_to(broker.url, broker.prefix):
            wait_for(lambda: app.control.ping(timeout=0.5), 30, "the worker did not start")
        yield process
    finally:
        stop(process)


def wait_for(condition, timeout: float, what: str):
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, what
        time.sleep(0.02)


def delivered_once(receiver, count: int) -> None:
    """The receiver got ``count`` deliveries, each exactly once."""
    received = [request.headers["X-Service-Delivery"] for request in receiver.requests]
    assert len(received) == count
    assert len(set(received)) == count


@pytest.fixture
def hooked(transactional_db, org_admin, organization, receiver, settings):
    """A space with a webhook installation posting to ``receiver``, and an API token."""
    settings.WEBHOOK_ALLOWED_NETWORKS = ["127.0.0.0/8"]
    space = SpaceFactory(organization=organization)
    space.current_revision = Revision.objects.create(space=space, message="first")
    space.save()
    installation_create(
        user=org_admin,
        integration=Integration.objects.get(name="webhook"),
        organization=organization,
        space=space,
        configuration={"url": receiver.url, "space_content_updated": True},
    )
    _, token = api_token_create(user=org_admin, name="hung broker test")
    return space, {"Authorization": f"Bearer {token}"}


def post_revision(base, space, headers, n: int):
    started = time.monotonic()
    response = requests.post(
        f"{base}/api/v1/spaces/{space.id}/revisions/",
        json={"message": f"change {n}", "pages": [{"path": f"p{n}", "title": f"P{n}"}]},
        headers=headers,
        timeout=60,
    )
    return response, time.monotonic() - started


@pytest.mark.slow
@pytest.mark.parametrize("scheme", ["redis", "amqp"])
@pytest.mark.parametrize("broker", ["silent", "refusing"])
def test_requests_answer_while_the_broker_hangs_and_the_events_arrive_once_it_is_back(
    scheme, broker, hooked, receiver, silent_broker, redis_back, settings, tmp_path
):
    space, headers = hooked
    port = silent_broker.port if broker == "silent" else free_port()
    with web_server(tmp_path, CELERY_BROKER_URL=broker_url(scheme, port)) as (base, log):
        with ThreadPoolExecutor(4) as pool:
            posts = [pool.submit(post_revision, base, space, headers, n) for n in range(3)]
            time.sleep(0.2)  # the POSTs are waiting on the broker, if anything waits
            started = time.monotonic()
            me = requests.get(f"{base}/api/v1/me/", headers=headers, timeout=LATE)
            me_took = time.monotonic() - started
            answers = [post.result() for post in posts]

        assert me.status_code == 200 and me_took < 2.0, me_took
        for response, took in answers:
            assert response.status_code == 201, response.text
            assert took < LATE, f"a POST took {took:.1f} s"
        output = log.read_text()

    # One warning line for each commit whose publish failed (or was skipped): no traceback.
    assert "Traceback" not in output, output
    warnings = [line for line in output.splitlines() if "broker unavailable" in line]
    assert len(warnings) == 3, output
    assert Delivery.objects.filter(consumer="webhook").count() == 3
    assert not DrainRequest.objects.filter(requested_at__isnull=False).exists()

    # The broker is back: the sweeper (what beat runs) sends them, a worker delivers them.
    settings.DELIVERY_SWEEP_GRACE_SECONDS = 0
    with publishing_to(redis_back.url, redis_back.prefix), webhook_worker(tmp_path, redis_back):
        assert deliveries_sweep() == 3
        wait_for(lambda: len(receiver.requests) >= 3, 30, "not delivered once the broker is back")
        time.sleep(1.0)  # nothing more comes
    delivered_once(receiver, 3)
    assert set(Delivery.objects.values_list("status", flat=True)) == {"succeeded"}


@pytest.mark.slow
def test_a_publish_hanging_in_one_process_does_not_hold_up_another_process(
    hooked, receiver, silent_broker, redis_back, tmp_path
):
    """While the web process waits on its hung broker, an event committed in another process
    (this one, whose broker answers) sends a drain at once instead of waiting behind the
    other's drain request: both events arrive well before the hung publish gives up (3 s),
    let alone the sweeper's grace period, each once."""
    space, headers = hooked
    hung = {"CELERY_BROKER_URL": broker_url("redis", silent_broker.port),
            "BROKER_TIMEOUT_SECONDS": str(HUNG_PUBLISH)}  # fmt: skip
    with (
        web_server(tmp_path, **hung) as (base, _),
        publishing_to(redis_back.url, redis_back.prefix),
        webhook_worker(tmp_path, redis_back),
        ThreadPoolExecutor(1) as pool,
    ):
        post = pool.submit(post_revision, base, space, headers, 1)
        # The web process marked the drain as being published, and waits on the broker.
        wait_for(
            lambda: DrainRequest.objects.filter(requested_at__gt=timezone.now()).exists(),
            10,
            "the web process never started publishing",
        )
        started = time.monotonic()
        space_content_update(space=space, pages=[{"path": "here", "title": "Here"}])
        wait_for(lambda: len(receiver.requests) >= 2, 3, "held up by the hung publish")
        arrived_in = time.monotonic() - started
        response, took = post.result()
        time.sleep(1.0)  # nothing more comes

    assert arrived_in < HUNG_PUBLISH - 1.0, arrived_in  # not behind the hung publish
    assert response.status_code == 201 and took < LATE
    assert (
        sorted(json.loads(r.body)["type"] for r in receiver.requests)
        == ["space_content_updated"] * 2
    )
    delivered_once(receiver, 2)
    assert deliveries_sweep() == 0
    assert not DrainRequest.objects.filter(requested_at__isnull=False).exists()


@pytest.mark.slow
@pytest.mark.parametrize("scheme", ["redis", "amqp"])
def test_commands_answer_while_the_broker_hangs(
    scheme, hooked, silent_broker, tmp_path, transactional_db
):
    space, _ = hooked
    url = broker_url(scheme, silent_broker.port)

    def timed(*arguments, **environment):
        started = time.monotonic()
        done = manage_py(*arguments, **environment)
        return done, time.monotonic() - started

    # The same commands on the test run's own broker first: what starting Python and Django
    # takes on this machine now, which is not the broker's wait.
    fire = ("fire_event", "space_content_updated", "--space", space.id)
    _, usual = timed(*fire)
    DrainRequest.objects.update(requested_at=None)  # as the drain it sent would, once done
    fired, took = timed(*fire, CELERY_BROKER_URL=url)
    assert took - usual < LATE, (took, usual)
    assert fired.returncode == 0, fired.stderr
    assert "fired space_content_updated" in fired.stdout and "to 1 installation" in fired.stdout
    assert "Traceback" not in fired.stderr
    assert fired.stderr.count("broker unavailable") == 1, fired.stderr

    ping = ("worker_ping", "--timeout", "1")
    _, usual = timed(*ping)  # no worker reads the test run's broker: it waits 1 s, then exits 1
    pinged, took = timed(*ping, CELERY_BROKER_URL=url)
    assert took - usual < LATE, (took, usual)
    assert pinged.returncode == 1
    assert "the broker is unavailable" in pinged.stderr and "Traceback" not in pinged.stderr
