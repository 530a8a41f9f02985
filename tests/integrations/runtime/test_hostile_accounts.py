"""Hostile integrations against the host's own accounts and the sandbox's last walls: work
left running after the answer, answers too large or out of turn, forbidden system calls,
files outside the interpreter's, and workers killed from outside (limits of the module's
host: 2 s per call)."""

import os
import signal
import textwrap
import threading
import time

import pytest
import requests

from integrations.runtime.stage import OWNER_FILE, STAGE_PREFIX, remove_stale_stages
from tests.conftest import wait_until

FETCH = {
    "type": "fetch",
    "eventId": "e",
    "request": {"method": "GET", "url": "http://p/x", "headers": {}},
}
TEMPLATE = """
import ctypes, errno, gc, json, os, socket, subprocess, sys, threading, time
from docplatform_sdk import Response, create_integration

def fetch(request, context):
    result = None
{body}
    return Response.json(result)

integration = create_integration(fetch=fetch)
"""


def script(body: str) -> str:
    """A script whose fetch runs ``body`` and answers the JSON of its ``result``."""
    return TEMPLATE.format(body=textwrap.indent(textwrap.dedent(body).strip(), "    "))


def with_comm(name: str) -> list[int]:
    """The host's pids of the threads named ``name`` (``/proc/*/task/*/comm``)."""
    found = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            tasks = os.listdir(f"/proc/{pid}/task")
        except OSError:
            continue
        for task in tasks:
            try:
                with open(f"/proc/{pid}/task/{task}/comm") as handle:
                    if handle.read().strip() == name:
                        found.append(int(task))
            except OSError:
                continue
    return found


SPIN_THREAD = script(
    """
    def spin():
        ctypes.CDLL(None).prctl(15, b"spinthread", 0, 0, 0)  # PR_SET_NAME
        while True:
            pass
    threading.Thread(target=spin, daemon=True).start()
    result = {"started": True}
    """
)
SPIN_PROCESS = script(
    """
    code = "import ctypes; ctypes.CDLL(None).prctl(15, b'spinprocess', 0, 0, 0)\\nwhile True: pass"
    subprocess.Popen([sys.executable, "-c", code], start_new_session=True)
    result = {"started": True}
    """
)
QUICK = script('result = {"quick": True}')


@pytest.mark.slow
def test_work_left_running_is_stopped_and_slows_no_one(client):
    for name, spinner, comm in (
        ("spinthread", SPIN_THREAD, "spinthread"),
        ("spinprocess", SPIN_PROCESS, "spinprocess"),
    ):
        answer = client.call(name, spinner, FETCH)
        answered = time.monotonic()
        assert (answer.status_code, answer.json()) == (200, {"started": True})
        assert client.call("quick", QUICK, FETCH).json() == {"quick": True}
        while with_comm(comm):
            assert time.monotonic() - answered < 3, f"{comm} still runs"
            started = time.monotonic()
            assert client.call("quick", QUICK, FETCH).status_code == 200
            assert time.monotonic() - started < 1
            time.sleep(0.05)
        # The integration's next call is served by a fresh worker.
        assert client.call(name, spinner, FETCH).status_code == 200


SPIN_LATER = script(
    """
    import signal
    if request.query.get("arm"):  # a handler that spins once the call has been answered
        def spin(signum, frame):
            while True:
                pass
        signal.signal(signal.SIGALRM, spin)
        signal.setitimer(signal.ITIMER_REAL, 0.3)
    result = {"served": True}
    """
)


@pytest.mark.slow
def test_a_worker_busy_between_calls_is_stopped_and_never_given_the_next_call(client):
    """Work that starts after the host's accounts found none (a signal handler armed by the
    call) is seen by the idle watch, which stops the worker; the next call goes to another
    worker, whether it finds the stopped one among the idle or waits for one."""
    armed = {**FETCH, "request": {**FETCH["request"], "url": "http://p/x?arm=1"}}
    assert client.call("spinlater", SPIN_LATER, armed).json() == {"served": True}
    wait_until(lambda: "stopped: it kept using CPU" in client.host.log(), timeout=10)
    for _ in range(3):
        answer = client.call("spinlater", SPIN_LATER, FETCH)
        assert (answer.status_code, answer.json()) == (200, {"served": True})
    assert "worker_lost" not in client.host.log()


@pytest.mark.slow
def test_an_answer_over_the_limit_is_never_read(client):
    flood = script('return Response(200, {}, b"x" * (60 << 20))')
    answer = client.call("flood", flood, FETCH)
    assert answer.status_code == 502
    assert answer.json() == {"error": "answer_too_large", "limit": 10 << 20}
    assert client.call("quick", QUICK, FETCH).json() == {"quick": True}


@pytest.mark.slow
def test_an_answer_written_out_of_turn_never_answers_another_call(client):
    # The code finds the protocol's channel and writes an answer of its own, for its call
    # (the real one follows it, late: after the host took the forged one and gave the worker
    # its next call) or for the next call (whose id it guesses).
    forger = script(
        """
        from docplatform_sdk.worker import HostChannel
        channel = next(o for o in gc.get_objects() if isinstance(o, HostChannel))
        ahead = int(request.query.get("ahead", "-1"))
        if ahead >= 0:
            channel.call_id += ahead
            channel.send({"status": 299, "headers": [], "body": b"forged", "outcome": "ok"})
            channel.call_id -= ahead
            time.sleep(0.5)
        result = {"own": request.query.get("n")}
        """
    )

    def call(query: str):
        event = {**FETCH, "request": {**FETCH["request"], "url": f"http://p/x?{query}"}}
        return client.call("forger", forger, event)

    for ahead in (0, 1):
        call(f"ahead={ahead}")  # its own call: whatever it answers
        for n in range(4):
            answer = call(f"n={n}")
            assert (answer.status_code, answer.json()) == (200, {"own": str(n)})


SYSCALLS = script(
    """
    libc = ctypes.CDLL(None, use_errno=True)
    calls = {
        "unshare(CLONE_NEWUSER)": (272, 0x10000000),
        "clone(CLONE_NEWUSER)": (56, 0x10000000 | 17, 0, 0, 0, 0),
        "ptrace": (101, 16, 1, 0, 0),
        "keyctl": (250, 0, 0, 0, 0),
        "add_key": (248, 0, 0, 0, 0),
        "request_key": (249, 0, 0, 0, 0),
        "bpf": (321, 0, 0, 0),
        "perf_event_open": (298, 0, 0, -1, -1, 0),
        "userfaultfd": (323, 0),
        "io_uring_setup": (425, 1, 0),
        "mount": (165, 0, 0, 0, 0, 0),
        "umount2": (166, 0, 0),
        "pivot_root": (155, 0, 0),
        "init_module": (175, 0, 0, 0),
        "kexec_load": (246, 0, 0, 0, 0),
        "socket(AF_PACKET)": (41, 17, 3, 0),
        "socket(SOCK_RAW)": (41, 2, 3, 1),
    }
    result = {}
    for name, (number, *arguments) in calls.items():
        ctypes.set_errno(0)
        answer = libc.syscall(number, *[ctypes.c_long(a) for a in arguments])
        result[name] = errno.errorcode.get(ctypes.get_errno(), "ok") if answer == -1 else "ok"
    threading.Thread(target=lambda: None).start()  # threads still start (clone3 refused)
    result["thread"] = "ok"
    """
)


def test_forbidden_system_calls_are_refused(client):
    answer = client.call("syscalls", SYSCALLS, FETCH)
    assert answer.status_code == 200, answer.text
    seen = answer.json()
    assert seen.pop("thread") == "ok"
    assert seen == dict.fromkeys(seen, "EPERM") and len(seen) == 17


def test_only_the_interpreters_files_of_usr_are_visible(client):
    looker = script(
        """
        result = {p: os.path.exists(p) for p in (
            "/usr/local/etc", "/usr/share", "/usr/lib", "/usr/bin/env", "/bin/sh")}
        echo = subprocess.run(["/bin/sh", "-c", "echo hi"], capture_output=True)
        result["sh"] = echo.stdout.decode()
        """
    )
    assert os.path.isdir("/usr/local/etc")
    seen = client.call("looker", looker, FETCH).json()
    assert seen == {
        "/usr/local/etc": False,
        "/usr/share": False,
        "/usr/lib": True,
        "/usr/bin/env": True,
        "/bin/sh": True,
        "sh": "hi\n",
    }


def worker_interpreters(host_pid: int) -> list[int]:
    """The pids of the worker interpreters below the host ``host_pid`` (below bwrap)."""
    parents, names = {}, {}
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{pid}/stat", "rb") as handle:
                head, _, rest = handle.read().rpartition(b")")
        except OSError:
            continue
        parents[int(pid)], names[int(pid)] = int(rest.split()[1]), head.partition(b"(")[2]

    def below_host(pid: int) -> bool:
        while pid > 1:
            pid = parents.get(pid, 0)
            if pid == host_pid:
                return True
        return False

    return [
        pid
        for pid, name in names.items()
        if name.startswith(b"python") and names.get(parents[pid]) == b"bwrap" and below_host(pid)
    ]


@pytest.mark.slow
def test_a_worker_killed_from_outside_mid_call_is_lost_not_failed(client):
    slow = script(
        """
        print("started", flush=True)
        time.sleep(1.5)
        result = {"slept": True}
        """
    )
    assert client.call("slowpoke", slow, FETCH).status_code == 200  # the pool exists
    host = client.host.process.pid
    assert worker_interpreters(host)

    def kill_the_workers():  # as the kernel's OOM killer would
        time.sleep(0.7)
        for pid in worker_interpreters(host):
            os.kill(pid, signal.SIGKILL)

    killer = threading.Thread(target=kill_the_workers)
    killer.start()
    answer = client.call("slowpoke", slow, FETCH)
    killer.join()
    assert answer.status_code == 503, answer.text
    assert answer.json() == {"error": "worker_lost"}
    assert answer.headers["X-Runtime-Outcome"] == "worker_lost"
    wait_until(lambda: client.call("slowpoke", slow, FETCH).status_code == 200, timeout=10)


def test_exiting_or_crashing_code_is_final(client):
    exiter = script("os._exit(3)")
    assert client.call("exiter3", exiter, FETCH).json() == {"error": "worker_crashed"}


def test_the_scratch_folders_of_dead_hosts_are_removed(tmp_path):
    dead, alive, unowned = (tmp_path / f"{STAGE_PREFIX}{name}" for name in ("a", "b", "c"))
    for folder in (dead, alive, unowned):
        (folder / "sdk").mkdir(parents=True)
    with open(f"/proc/{os.getpid()}/stat", "rb") as handle:
        started = handle.read().rpartition(b")")[2].split()[19].decode()
    (alive / OWNER_FILE).write_text(f"{os.getpid()} {started}")
    (dead / OWNER_FILE).write_text(f"{os.getpid()} 1")  # this pid, another start: gone
    assert remove_stale_stages(str(tmp_path)) == [str(dead)]
    assert not dead.exists() and alive.exists() and unowned.exists()


@pytest.mark.slow
def test_a_killed_hosts_scratch_folder_goes_at_the_next_start(tmp_path_factory):
    from .conftest import start_host

    stages = tmp_path_factory.mktemp("stages")
    first = start_host(tmp_path_factory, RUNTIME_STAGE_DIR=str(stages))
    (stage,) = stages.iterdir()
    first.process.send_signal(signal.SIGKILL)
    first.process.wait(timeout=10)
    first._log.close()
    assert stage.exists()
    second = start_host(tmp_path_factory, RUNTIME_STAGE_DIR=str(stages))
    try:
        assert not stage.exists()
        assert len(list(stages.iterdir())) == 1
        assert requests.get(second.url + "/health", timeout=5).status_code == 200
    finally:
        second.stop()
