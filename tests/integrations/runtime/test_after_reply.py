"""The host's accounts of a worker come after its call's answer is sent
(``integrations/runtime/after_reply.py``), and the worker is given no other call before they
are done: a call arriving meanwhile waits for that worker rather than starting another, and
one the accounts retire is replaced before the next call runs. A host in this process (its
workers real, unconfined), so the test holds the accounts back as a transport does."""

import json
import time
from concurrent.futures import ThreadPoolExecutor

import pytest
from docplatform_sdk import codebundle

from integrations.runtime import after_reply
from integrations.runtime.capacity import PoolSettings
from integrations.runtime.config import HostConfig
from integrations.runtime.host import RuntimeHost

from .support import bundle_of, environment_for

SCRIPT = """
import os, threading, time
from docplatform_sdk import Response, create_integration

WORKER = os.urandom(8).hex()

def fetch(request, context):
    if request.query.get("leave"):  # a thread left running: work left behind
        threading.Thread(target=time.sleep, args=(60,), daemon=True).start()
    return Response.json({"worker": WORKER})

integration = create_integration(fetch=fetch)
"""


@pytest.fixture
def pool():
    host = RuntimeHost(
        HostConfig(
            signing_keys=["test-key"],
            sandbox="off",
            pools=PoolSettings(spare_workers=0, queue_timeout=10),
        )
    )
    bundle = codebundle.decode(bundle_of(SCRIPT))
    yield host.pools.create(("settled", codebundle.digest(bundle_of(SCRIPT))), None, bundle)
    host.close()


def message(query: str = "") -> dict:
    event = {
        "type": "fetch",
        "eventId": "e",
        "request": {"method": "GET", "url": f"http://p/x?{query}", "headers": {}},
    }
    environment = environment_for("settled", SCRIPT)
    return {"call": {"event": event, "environment": environment}, "body": None}


def worker_of(answer: dict) -> str:
    return json.loads(answer["body"])["worker"]


def test_a_call_waits_for_the_accounts_of_the_worker_before_it_and_starts_no_other(pool):
    with after_reply.held() as later:
        first = pool.call(message())  # answered; its worker's accounts held back
    with ThreadPoolExecutor(1) as caller:
        second = caller.submit(pool.call, message())
        time.sleep(0.5)
        assert not second.done()  # waiting for the one worker, not starting a second
        after_reply.run(later)
        assert worker_of(second.result(10)) == worker_of(first)
    assert pool.capacity.loads == 1


def test_a_worker_its_accounts_retire_is_replaced_before_the_next_call(pool):
    with after_reply.held() as later:
        first = pool.call(message("leave=1"))
    with ThreadPoolExecutor(1) as caller:
        second = caller.submit(pool.call, message())
        after_reply.run(later)
        assert worker_of(second.result(10)) != worker_of(first)
    assert pool.capacity.loads == 2
