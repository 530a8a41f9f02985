"""Failing integration code is contained: it runs in sandboxed, limited worker processes that
the host replaces when they fail (limits of the module's host: 2 s per call, 256 MiB).
The escape attempts of hostile code are in test_sandbox.py."""

import base64
import contextlib
import json
import os
import threading
import time

import pytest
import requests

from .conftest import start_host
from .support import PROJECT_ROOT, EnvelopeClient, environment_for

FETCH = {
    "type": "fetch",
    "eventId": "e",
    "request": {"method": "GET", "url": "http://p/x", "headers": {}},
}


@pytest.fixture(scope="module")
def single_worker(tmp_path_factory):
    """A host with one worker per version, so a replaced worker shows as a new pid."""
    host = start_host(tmp_path_factory, RUNTIME_WORKERS_PER_VERSION="1")
    yield EnvelopeClient(host)
    host.stop()


def hostile(body: str) -> str:
    """A script whose fetch runs ``body`` unless the request asks for ``?pid`` (then it
    answers its worker's identity: every sandboxed worker is pid 2 of its own namespace)."""
    indented = "\n".join("    " + line for line in body.strip().splitlines())
    return f"""
import os
from docplatform_sdk import Response, create_integration

WORKER = os.urandom(8).hex()

def fetch(request, context):
    if request.query.get("pid"):
        return Response.json({{"pid": WORKER}})
{indented}

integration = create_integration(fetch=fetch)
"""


def pid_event():
    return {**FETCH, "request": {**FETCH["request"], "url": "http://p/x?pid=1"}}


def worker_pid(client, name, script):
    answer = client.call(name, script, pid_event())
    assert answer.status_code == 200, answer.text
    return answer.json()["pid"]


def test_an_exception_is_reported_without_its_stack(client):
    answer = client.call("raiser", hostile("raise ValueError('boom')"), FETCH)
    assert answer.status_code == 500
    assert answer.json() == {"error": "integration_error", "message": "ValueError: boom"}
    assert "Traceback" not in answer.text and "line " not in answer.text
    # The stack goes to the platform with the answer, for the integration's log (its
    # developer's), naming the author's file; not to the host's log.
    stack = base64.b64decode(answer.headers["X-Runtime-Error"]).decode()
    assert 'File "main.py", line ' in stack and stack.endswith("ValueError: boom\n")
    assert "Traceback" not in client.host.log()


@pytest.mark.parametrize(
    ("name", "body", "status", "error"),
    [
        ("looper", "while True:\n    pass", 504, {"error": "timeout"}),
        ("exiter", "os._exit(1)", 502, {"error": "worker_crashed"}),
        ("segfaulter", "import ctypes\nctypes.string_at(0)", 502, {"error": "worker_crashed"}),
    ],
)
def test_a_hang_or_crash_is_reported_and_the_worker_replaced(
    single_worker, name, body, status, error
):
    script = hostile(body)
    before = worker_pid(single_worker, name, script)
    answer = single_worker.call(name, script, FETCH)
    assert answer.status_code == status
    assert answer.json() == error
    assert answer.headers["X-Runtime-Outcome"] == error["error"]
    assert worker_pid(single_worker, name, script) != before


def test_a_memory_blow_up_is_contained_and_the_worker_replaced(single_worker):
    script = hostile("hoard = []\nwhile True:\n    hoard.append(bytearray(16 * 1024 * 1024))")
    before = worker_pid(single_worker, "hoarder", script)
    answer = single_worker.call("hoarder", script, FETCH)
    assert answer.status_code == 500
    assert answer.json()["error"] == "integration_error"
    assert answer.json()["message"].startswith("MemoryError")
    assert worker_pid(single_worker, "hoarder", script) != before


PROBE = """
import os, sys
from docplatform_sdk import Response, create_integration

def can_import(name):
    try:
        __import__(name)
    except ImportError as error:
        return type(error).__name__
    return "imported"

def settings_state():
    try:
        from django.conf import settings
    except ImportError:
        return "django absent"
    try:
        settings.DATABASES
    except Exception as error:
        return type(error).__name__
    return "configured"

def dumpable():
    import ctypes
    return ctypes.CDLL(None).prctl(3, 0, 0, 0, 0)

def fetch(request, context):
    print("integration code printing to stdout does not break the protocol")
    return Response.json({
        "environ": dict(os.environ),
        "cwd": os.getcwd(),
        "cwd_entries": os.listdir("."),
        "sys_path": sys.path,
        "docplatform": can_import("docplatform"),
        "integrations_models": can_import("integrations.models"),
        "webhooks": can_import("webhooks"),
        "sdk": can_import("docplatform_sdk"),
        "old_sdk": can_import("integrations.runtime"),
        "django_settings": settings_state(),
        "dumpable": dumpable(),
    })

integration = create_integration(fetch=fetch)
"""


def test_integration_code_cannot_reach_the_platforms_settings(client):
    answer = client.call("prober", PROBE, FETCH)
    assert answer.status_code == 200, answer.text
    seen = answer.json()
    assert set(seen["environ"]) <= {"PATH", "LANG", "HOME", "PWD"}
    for secret in ("DATABASE_URL", "DJANGO_SETTINGS_MODULE", "SECRET_KEY", "RUNTIME_SIGNING_KEY"):
        assert secret not in json.dumps(seen["environ"])
    assert seen["docplatform"] == "ModuleNotFoundError"
    assert seen["integrations_models"] == "ModuleNotFoundError"
    assert seen["webhooks"] == "ModuleNotFoundError"
    assert seen["sdk"] == "imported"
    assert seen["old_sdk"] == "ModuleNotFoundError"
    assert seen["django_settings"] in ("ImproperlyConfigured", "django absent")
    assert seen["cwd_entries"] == []
    assert str(PROJECT_ROOT) not in seen["sys_path"] and "" not in seen["sys_path"]
    assert seen["dumpable"] == 0


def test_one_integration_does_not_see_anothers_secrets_or_globals(client):
    keeper = hostile(
        "import builtins\n"
        "builtins.stolen = context.environment.secrets.API_KEY\n"
        "return Response.text('kept')"
    )
    thief = hostile("import builtins\nreturn Response.text(getattr(builtins, 'stolen', 'nothing'))")
    assert client.call("keeper", keeper, FETCH).text == "kept"
    assert client.call("thief", thief, FETCH).text == "nothing"


def call_in_thread(client, name, script, event, answers):
    thread = threading.Thread(target=lambda: answers.append(client.call(name, script, event)))
    thread.start()
    return thread


@pytest.mark.slow
def test_a_hanging_integration_does_not_block_another(client):
    sleeper = hostile("import time\ntime.sleep(60)")
    echo = hostile("return Response.text('still here')")
    client.call("echoer", echo, FETCH)  # warm
    hung = []
    threads = [call_in_thread(client, "sleeper", sleeper, FETCH, hung) for _ in range(3)]
    time.sleep(0.3)
    for _ in range(5):
        answer = client.call("echoer", echo, FETCH)
        assert answer.status_code == 200
        assert answer.text == "still here"
    assert not hung, "the other integration answered while the sleeper was still hanging"
    for thread in threads:
        thread.join()
    # two workers per version: two calls time out, the third waits its turn in vain
    assert sorted(answer.status_code for answer in hung) == [503, 504, 504]
    assert {"error": "busy"} in [answer.json() for answer in hung]
    assert worker_pid(client, "sleeper", sleeper)  # both killed workers were replaced


@pytest.mark.slow
def test_a_version_is_served_by_several_pre_started_workers(client):
    script = hostile("import time\ntime.sleep(0.5)\nreturn Response.json({'pid': WORKER})")
    client.call("parallel", script, pid_event())
    time.sleep(1)  # the second worker starts in the background
    answers = []
    threads = [call_in_thread(client, "parallel", script, FETCH, answers) for _ in range(2)]
    for thread in threads:
        thread.join()
    assert [answer.status_code for answer in answers] == [200, 200]
    assert len({answer.json()["pid"] for answer in answers}) == 2


def test_the_platform_sees_each_call_with_its_own_environment(client):
    script = hostile("return Response.text(context.environment.installation.id)")
    environment = environment_for("per-call", script, client.host.url)
    environment["installation"] = {**environment["installation"], "id": "inst-2"}
    assert client.call("per-call", script, FETCH, environment).text == "inst-2"


@pytest.mark.slow
@pytest.mark.parametrize("sandbox", ["bwrap", "off"])
def test_workers_end_with_their_host(tmp_path_factory, sandbox):
    """Even in the middle of a hung call: the kernel ends a worker whose parent is gone (its
    parent-death signal), with no thread in the worker to watch for it, so between calls a
    worker is one thread (the host reads that one thread's files after each call)."""
    host = start_host(
        tmp_path_factory,
        RUNTIME_WORKERS_PER_VERSION="1",
        RUNTIME_CALL_TIMEOUT="30",
        RUNTIME_SANDBOX=sandbox,
    )
    client = EnvelopeClient(host)
    script = hostile("import time\ntime.sleep(600)")
    worker_pid(client, "orphan", script)
    started = descendants(host.process.pid)
    assert started
    # the innermost process of each worker's chain (bwrap's two, then Python's)
    interpreters = [pid for pid in started if not descendants(pid)]
    assert {pid: threads_of(pid) for pid in interpreters} == dict.fromkeys(interpreters, 1)

    def hang():
        with contextlib.suppress(requests.ConnectionError):
            client.call("orphan", script, FETCH)

    threading.Thread(target=hang, daemon=True).start()
    time.sleep(0.3)
    host.process.kill()  # no chance to clean up: the worker must notice on its own
    host.stop()
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and any(process_exists(pid) for pid in started):
        time.sleep(0.1)
    assert not [pid for pid in started if process_exists(pid)]


def threads_of(pid: int) -> int:
    with open(f"/proc/{pid}/stat") as stat:
        return int(stat.read().rpartition(")")[2].split()[17])


def descendants(root: int) -> set[int]:
    """The processes started, directly or not, by process ``root``."""
    parents = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            with contextlib.suppress(OSError, IndexError), open(f"/proc/{entry}/stat") as stat:
                parents[int(entry)] = int(stat.read().rsplit(") ", 1)[1].split()[1])
    found, frontier = set(), {root}
    while frontier:
        children = {pid for pid, parent in parents.items() if parent in frontier} - found
        found |= children
        frontier = children
    return found


def process_exists(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().split(") ")[1][0] != "Z"  # a zombie has ended
    except FileNotFoundError:
        return False


@pytest.mark.slow
def test_pools_of_versions_no_longer_called_are_retired(tmp_path_factory):
    # No spares: they would stay, bound to no version (so each pool's worker starts anew).
    host = start_host(tmp_path_factory, RUNTIME_POOL_IDLE_SECONDS="3", RUNTIME_SPARE_WORKERS="0")
    try:
        client = EnvelopeClient(host)
        versions = [hostile(f"return Response.text('v{number}')") for number in range(3)]
        for number, script in enumerate(versions):
            assert client.call(f"old-{number}", script, FETCH).text == f"v{number}"

        def health():
            return requests.get(f"{host.url}/health", timeout=5).json()

        assert health()["pools"] == 3
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline and health()["pools"]:
            time.sleep(0.2)
        assert health()["pools"] == 0, host.log()
        assert not descendants(host.process.pid)  # their workers are gone too
        assert client.call("old-0", versions[0], FETCH).text == "v0"  # sent again, runs again
    finally:
        host.stop()
