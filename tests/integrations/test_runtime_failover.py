"""Two runtime hosts, and the one serving a version killed mid-stream.

Real processes: two web servers (gunicorn), two Celery workers and two runtime hosts, both
hosts in every process's ``RUNTIME_URL``. A stream of calls to the installation's public
endpoint goes to both web servers while events are fired; the host that serves the version
(its rendezvous choice) is killed with SIGKILL in the middle. Every event is handled (at
least once: one in flight at the kill may be handled twice, counted), every call started
once the killed host is gone is answered 200, and a call in flight at the kill (or sent while
the host was dying, its socket still open) fails 502 at worst.
"""

import os
import signal
import sys
import threading
import time
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import urlsplit

import pytest
import requests

from docplatform.events.models import Delivery
from docplatform.revisions import space_content_update
from integrations.environment import installation_public_endpoint, runtime_signing_key
from integrations.gateway.hosts import rendezvous_order
from integrations.services import integration_publish_folder
from integrations.services.installations import installation_create
from tests.conftest import wait_until
from tests.factories import SpaceFactory
from tests.integrations.conftest import minimal_manifest
from tests.integrations.runtime.support import RunningHost, free_port
from tests.processes import BIN, platform_env, start, stop

pytestmark = pytest.mark.slow

EVENTS_BEFORE, EVENTS_AFTER = 10, 10
CALLERS_PER_WEB_SERVER = 2

SCRIPT = """
import time

from docplatform_sdk import Response, create_integration

def on_content_updated(event, context):
    context.fetch("{receiver}/handled/" + event["eventId"], method="POST")
    time.sleep(0.2)  # reported, then still running: a kill now has it handled twice

def fetch(request, context):
    return Response.json({{"route": request.route}})

integration = create_integration(
    fetch=fetch, events={{"space_content_updated": on_content_updated}}
)
"""


class Receiver(ThreadingHTTPServer):
    """Where the integration reports each event it handled (``POST /handled/<eventId>``)."""

    daemon_threads = True

    def __init__(self):
        self.handled: list[str] = []
        super().__init__(("127.0.0.1", 0), ReceiverHandler)
        self.url = f"http://127.0.0.1:{self.server_address[1]}"
        threading.Thread(target=self.serve_forever, daemon=True).start()


class ReceiverHandler(BaseHTTPRequestHandler):
    def do_POST(self):
        self.server.handled.append(self.path.rsplit("/", 1)[-1])
        self.send_response(204)
        self.end_headers()

    def log_message(self, *args):
        pass


@contextmanager
def web_server(tmp_path, runtime_url: str):
    """gunicorn serving the platform (one worker of four threads); yields its integrations
    origin, where the public endpoints are served."""
    port = free_port()
    env = platform_env(
        PLATFORM_URL=f"http://localhost:{port}",
        INTEGRATIONS_URL=f"http://127.0.0.1:{port}",
        RUNTIME_URL=runtime_url,
        LOG_LEVEL="WARNING",
    )
    command = [str(BIN / "gunicorn"), "--bind", f"127.0.0.1:{port}", "--workers", "1",
               "--threads", "4", "--timeout", "120", "docplatform.wsgi"]  # fmt: skip
    log_path = tmp_path / f"web-{port}.log"
    process = start(command, env, log_path)
    try:
        deadline = time.monotonic() + 30
        while True:
            assert process.poll() is None, log_path.read_text()
            try:
                requests.get(f"http://localhost:{port}/api/v1/me/", timeout=10)
                break
            except requests.ConnectionError:
                assert time.monotonic() < deadline, "the web server did not start"
                time.sleep(0.1)
        yield f"http://127.0.0.1:{port}"
    finally:
        stop(process)


@contextmanager
def worker_process(tmp_path, name: str, runtime_url: str, broker):
    env = platform_env(**broker.env, RUNTIME_URL=runtime_url, RUNTIME_RETRY_BASE_DELAY="0.5")
    if broker.folder is not None:  # tests.settings reads its broker folder from here
        env["TEST_BROKER_DIR"] = str(broker.folder)
    command = [sys.executable, "-m", "celery", "-A", "docplatform", "worker", "-Q",
               "runtime,default", "--pool", "threads", "--concurrency", "4", "-n", name,
               "--without-mingle", "--without-gossip", "--loglevel", "WARNING"]  # fmt: skip
    process = start(command, env, tmp_path / f"{name}.log")
    try:
        yield process
    finally:
        stop(process)


@dataclass
class Call:
    started: float
    ended: float
    status: int
    error: str = ""


def call_stream(url: str, calls: list[Call], stopping: threading.Event) -> None:
    """Call ``url`` again and again until ``stopping``, recording each call."""
    session = requests.Session()
    while not stopping.is_set():
        started = time.monotonic()
        try:
            answer = session.get(url, timeout=30)
            status = answer.status_code
            error = "" if status == 200 else answer.json().get("error", "")
        except requests.RequestException as exc:
            status, error = 0, type(exc).__name__
        calls.append(Call(started, time.monotonic(), status, error))


def test_a_runtime_host_killed_mid_stream_loses_no_event_and_no_later_call(
    transactional_db, org_admin, organization, write_integration, private_broker, tmp_path,
    settings,
):  # fmt: skip
    receiver = Receiver()
    key = runtime_signing_key()
    environment = {"RUNTIME_ALLOWED_NETWORKS": "127.0.0.0/8", "RUNTIME_CALL_TIMEOUT": "5"}
    with ExitStack() as stack:
        runtime_hosts = []
        for name in ("a", "b"):
            host = RunningHost(key, tmp_path / f"host-{name}.log", **environment)
            stack.callback(host.stop)
            runtime_hosts.append(host)
        runtime_url = ",".join(host.frames_url for host in runtime_hosts)
        settings.RUNTIME_URL = runtime_url

        manifest = minimal_manifest(
            name="steady", script="main.py", network={"fetch": ["127.0.0.1"]}
        )
        root = write_integration(
            manifest, files={"main.py": SCRIPT.format(receiver=receiver.url)}, folder="steady"
        )
        version = integration_publish_folder(path=root, publisher=org_admin).version
        space = SpaceFactory(organization=organization)
        installation = installation_create(
            user=org_admin, integration=version.integration, organization=organization,
            space=space,
        )  # fmt: skip
        path = urlsplit(installation_public_endpoint(installation)).path + "/ping"
        urls = [host.frames_url for host in runtime_hosts]
        serving = rendezvous_order(version.bundle_hash, urls)[0]
        victim = next(host for host in runtime_hosts if host.frames_url == serving)

        origins = [stack.enter_context(web_server(tmp_path, runtime_url)) for _ in range(2)]
        for name in ("worker-1", "worker-2"):
            stack.enter_context(worker_process(tmp_path, name, runtime_url, private_broker))
        for origin in origins:  # the version loaded on its host
            assert requests.get(origin + path, timeout=30).status_code == 200
        setup = Delivery.objects.filter(installation=installation)
        wait_until(lambda: setup.filter(status="succeeded").exists(), timeout=60)  # workers up

        calls: list[Call] = []
        stopping = threading.Event()
        callers = [
            threading.Thread(target=call_stream, args=(origin + path, calls, stopping))
            for origin in origins
            for _ in range(CALLERS_PER_WEB_SERVER)
        ]
        for caller in callers:
            caller.start()
        try:
            for n in range(EVENTS_BEFORE):
                space_content_update(space=space, pages=[{"path": "p", "title": f"v{n}"}])
                time.sleep(0.1)
            os.kill(victim.process.pid, signal.SIGKILL)  # the last events still running
            killed_at = time.monotonic()
            # Until its process is gone, its sockets are open: a call sent meanwhile may be
            # taken in by the dying host, as one sent just before the kill.
            victim.process.wait(timeout=30)
            gone_at = time.monotonic()
            for n in range(EVENTS_AFTER):
                space_content_update(space=space, pages=[{"path": "p", "title": f"w{n}"}])
                time.sleep(0.1)
            time.sleep(2)
        finally:
            stopping.set()
            for caller in callers:
                caller.join(timeout=60)

        deliveries = Delivery.objects.filter(
            installation=installation, event__type="space_content_updated"
        )
        wait_until(
            lambda: not deliveries.filter(status__in=["pending", "retrying"]).exists(),
            timeout=60,
        )
        receiver.shutdown()

    fired = EVENTS_BEFORE + EVENTS_AFTER
    assert deliveries.count() == fired
    assert set(deliveries.values_list("status", "outcome")) == {("succeeded", "handled")}, list(
        deliveries.values_list("status", "outcome", "last_error")
    )
    event_ids = {str(uuid) for uuid in deliveries.values_list("event_uuid", flat=True)}
    assert set(receiver.handled) == event_ids  # each handled at least once
    duplicates = len(receiver.handled) - len(event_ids)

    before = [call for call in calls if call.ended < killed_at]
    in_flight = [call for call in calls if call.started < gone_at and call.ended >= killed_at]
    after = [call for call in calls if call.started >= gone_at]
    assert before and after
    assert {call.status for call in before} == {200}
    assert {(call.status, call.error) for call in after} == {(200, "")}
    failed = [call for call in in_flight if call.status != 200]
    assert {(call.status, call.error) for call in failed} <= {(502, "runtime_unavailable")}
    retried = deliveries.filter(attempts__gt=1).count()
    print(
        f"\nfailover: {len(calls)} calls ({len(before)} before the kill, {len(in_flight)} in "
        f"flight: {len(failed)} failed 502, {len(after)} after: all 200); {fired} events "
        f"fired, {len(receiver.handled)} handled ({duplicates} twice), {retried} retried"
    )
