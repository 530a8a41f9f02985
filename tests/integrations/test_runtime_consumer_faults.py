"""The runtime consumer under a hanging integration or a silent runtime host: every call ends
by its deadline, a hanging integration holds only its own deliveries (the rest of its burst
is postponed, not failed), and a delivery whose lease was taken over is settled once.

A real runtime host (the session's), real worker threads, a real silent server.
"""

import logging
import os
import signal
import socket
import threading
import time

import pytest
from django.db import connection, transaction

from docplatform.events.models import Delivery
from docplatform.revisions import space_content_update
from integrations.models import IntegrationLog
from integrations.operators import OPERATOR
from integrations.services import integration_publish_folder
from integrations.services.installations import installation_create, installation_pause
from integrations.services.runtime_deliveries import runtime_deliver
from tests.conftest import wait_until
from tests.factories import SpaceFactory
from tests.integrations.conftest import minimal_manifest

HANDLERS = {
    "hangs": ["while True:", "    pass"],
    "answers": ["return None"],
    "takes-1-5-s": ["end = time.monotonic() + 1.5", "while time.monotonic() < end:", "    pass"],
}


def script(lines: list[str]) -> str:
    handler = "\n".join("    " + line for line in lines)
    return (
        "import time\n\n"
        "from docplatform_sdk import Response, create_integration\n\n\n"
        f"async def on_content_updated(event, context):\n{handler}\n\n\n"
        "integration = create_integration(\n"
        "    fetch=lambda request, context: Response.json({}),\n"
        '    events={"space_content_updated": on_content_updated},\n'
        ")\n"
    )


@pytest.fixture
def integration(runtime, org_admin, write_integration):
    """Publish (through the real runtime host's code check) an integration whose content
    handler does what its name says."""

    def publish(name: str):
        root = write_integration(
            minimal_manifest(name=name, script="main.py", scopes=["space:content:read"]),
            files={"main.py": script(HANDLERS[name])},
            folder=name,
        )
        return integration_publish_folder(path=root, publisher=org_admin).version.integration

    return publish


@pytest.fixture
def installed(org_admin, organization):
    """A new space with an installation of ``integration``."""

    def install(integration):
        space = SpaceFactory(organization=organization)
        installation = installation_create(
            user=org_admin, integration=integration, organization=organization, space=space
        )
        return space, installation

    return install


def update(space):
    space_content_update(space=space, pages=[{"path": "p", "title": "P"}])


def content_deliveries(**lookups):
    return Delivery.objects.filter(event__type="space_content_updated", **lookups)


@pytest.mark.slow
def test_a_hanging_integration_holds_up_no_other_integrations_deliveries(
    celery_worker, integration, installed, settings
):
    """Five deliveries to an integration that never returns, then one to a healthy one, all
    in one transaction, with four worker threads: the hanging integration takes one slot (its
    bound), the rest of its burst waits, and the healthy delivery is handled at once."""
    settings.RUNTIME_INTEGRATION_CONCURRENCY = 1
    settings.RUNTIME_RETRY_BASE_DELAY = 0.5
    hangs, answers = integration("hangs"), integration("answers")
    hanging = [installed(hangs) for _ in range(5)]
    healthy_space, healthy = installed(answers)
    # The installations' setup events are answered (no handler) and the pools started.
    wait_until(lambda: not Delivery.objects.filter(status__in=Delivery.OPEN_STATUSES).exists())

    with transaction.atomic():
        for space, _ in hanging:
            update(space)
        update(healthy_space)
    committed = time.monotonic()
    while not content_deliveries(installation=healthy, status="succeeded").exists():
        assert time.monotonic() - committed < 2.5, "held up behind the hanging integration"
        time.sleep(0.02)
    assert content_deliveries(installation=healthy).get().outcome == "handled"
    waiting = content_deliveries(installation__integration=hangs, status="pending", attempts=0)
    assert waiting.count() == 5  # one in the host, four postponed: none failed

    # The hanging call is cut at the host's time limit (3 s here); its delivery fails with
    # the reason; the rest of the burst, paused meanwhile, is cancelled.
    for _, installation in hanging:
        installation_pause(user=OPERATOR, installation=installation)
    wait_until(
        lambda: not content_deliveries(status__in=Delivery.OPEN_STATUSES).exists(), timeout=10
    )
    # One call only was made to the hanging integration: its bound.
    (cut,) = content_deliveries(installation__integration=hangs, attempts__gt=0)
    assert (cut.status, cut.last_error) == ("failed", "the integration did not answer in time")
    assert cut.duration_ms < 4000
    assert content_deliveries(status="cancelled").count() == 4


@pytest.fixture
def silent_host():
    """A runtime host that takes every request and never answers."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(16)
    held, stop = [], threading.Event()

    def accept():
        while not stop.is_set():
            try:
                held.append(listener.accept()[0])
            except OSError:
                return

    threading.Thread(target=accept, daemon=True).start()
    yield f"http://127.0.0.1:{listener.getsockname()[1]}"
    stop.set()
    listener.close()
    for connection_ in held:
        connection_.close()


@pytest.mark.slow
@pytest.mark.usefixtures("private_broker")
def test_a_silent_runtime_host_is_cut_at_the_response_timeout_and_retried(
    integration, installed, settings, silent_host
):
    space, installation = installed(integration("answers"))
    update(space)
    settings.RUNTIME_URL = silent_host
    settings.RUNTIME_RESPONSE_TIMEOUT = 1.0
    delivery = content_deliveries(installation=installation).get()
    started = time.monotonic()
    runtime_deliver(delivery.pk)
    assert time.monotonic() - started < 1.6
    delivery.refresh_from_db()
    assert (delivery.status, delivery.attempts) == ("retrying", 1)
    assert delivery.last_error == "the runtime host cannot be reached (ReadTimeout)"
    assert delivery.lease_expires_at is None


class Worker(threading.Thread):
    """``runtime_deliver`` as a worker runs it, with its own database connection."""

    def __init__(self, delivery_id):
        super().__init__(daemon=True)
        self.delivery_id, self.raised = delivery_id, None

    def run(self):
        try:
            runtime_deliver(self.delivery_id)
        except BaseException as exc:  # the test reports it
            self.raised = exc
        finally:
            connection.close()

    def finish(self):
        self.join(20)
        assert not self.is_alive() and self.raised is None, self.raised


@pytest.mark.slow
@pytest.mark.usefixtures("private_broker")
def test_a_runtime_delivery_taken_over_is_settled_once(integration, installed, settings, caplog):
    space, installation = installed(integration("takes-1-5-s"))
    update(space)
    delivery = content_deliveries(installation=installation).get()
    settings.DELIVERY_LEASE_SECONDS = 1  # shorter than the call: it runs out meanwhile

    first = Worker(delivery.pk)
    first.start()
    time.sleep(1.1)
    second = Worker(delivery.pk)  # the sweeper's task, claiming what looks abandoned
    second.start()
    with caplog.at_level(logging.WARNING, logger="docplatform.events.outbox"):
        first.finish()  # its answer came first: dropped, the delivery is the second's now
        delivery.refresh_from_db()
        assert (delivery.status, delivery.attempts) == ("pending", 0)
        assert delivery.lease_expires_at is not None
        second.finish()
    delivery.refresh_from_db()
    assert (delivery.status, delivery.attempts, delivery.outcome) == ("succeeded", 1, "handled")
    assert f"deliveries [{delivery.pk}]: lease taken over (or settled already)" in caplog.text


def _cpu_ticks_below(root: int) -> dict[int, int]:
    """The CPU ticks of every process below ``root`` (the runtime host), by pid."""
    ticks, pending = {}, [root]
    while pending:
        pid = pending.pop()
        try:
            with open(f"/proc/{pid}/stat", "rb") as handle:
                fields = handle.read().rpartition(b")")[2].split()
            for thread in os.listdir(f"/proc/{pid}/task"):
                with open(f"/proc/{pid}/task/{thread}/children", "rb") as handle:
                    pending += [int(child) for child in handle.read().split()]
        except OSError:
            continue
        if pid != root:
            ticks[pid] = int(fields[11]) + int(fields[12])
    return ticks


#: CPU ticks (of ``SC_CLK_TCK``) in a 0.4 s window of a process that is running code: the
#: spinning handler uses most of each window (less on a busy machine).
RUNNING_TICKS = os.sysconf("SC_CLK_TCK") * 0.1


def _kill_the_busy_worker(host_pid: int) -> None:
    """SIGKILL, from outside, the process under the host that is spinning: the worker
    running the handler (the host sent no signal; the OOM killer would do this). Watched in
    windows of 0.4 s until the same process was the busiest, running, in two windows in a
    row: a spare interpreter starting meanwhile is busy for one at most, and on a busy
    machine the call may still be starting its worker."""
    deadline, running = time.monotonic() + 10, None
    before = _cpu_ticks_below(host_pid)
    while time.monotonic() < deadline:
        time.sleep(0.4)
        after = _cpu_ticks_below(host_pid)
        used = {pid: after[pid] - before.get(pid, after[pid]) for pid in after}
        busy = max(used, key=used.get, default=None)
        if busy is not None and used[busy] >= RUNNING_TICKS:
            if busy == running:
                os.kill(busy, signal.SIGKILL)
                return
            running = busy
        else:
            running = None
        before = after
    raise AssertionError("no worker ran the call")


@pytest.mark.slow
@pytest.mark.usefixtures("private_broker")
def test_a_worker_killed_from_outside_mid_delivery_is_retried_and_handled_once(
    integration, installed, runtime, settings
):
    """The worker running an event's handler is killed with SIGKILL by someone else: the
    delivery is not failed as if the code had crashed; it is retried (the retry policy's
    delays) and the handler then runs to its end, once."""
    settings.RUNTIME_RETRY_BASE_DELAY = 0.2
    space, installation = installed(integration("takes-1-5-s"))
    update(space)
    delivery = content_deliveries(installation=installation).get()

    first = Worker(delivery.pk)
    first.start()
    time.sleep(0.3)  # the call is in the worker, spinning
    _kill_the_busy_worker(runtime.process.pid)
    first.finish()
    delivery.refresh_from_db()
    assert (delivery.status, delivery.attempts) == ("retrying", 1)
    assert delivery.last_error == "the integration's worker was stopped from outside"

    runtime_deliver(delivery.pk)  # the retry, as the worker's next claim runs it
    delivery.refresh_from_db()
    assert (delivery.status, delivery.outcome) == ("succeeded", "handled")
    assert delivery.attempts == 2
    outcomes = list(
        IntegrationLog.objects.filter(installation=installation, event="space_content_updated")
        .order_by("id")
        .values_list("outcome", flat=True)
    )
    assert outcomes == ["error", "ok"]  # killed once, then run to its end once
