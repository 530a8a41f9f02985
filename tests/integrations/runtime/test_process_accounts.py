"""A worker's ``/proc`` files kept open (``process_accounts.ProcFiles``): each read is what the
process is now, a reaped process's files are opened anew for whatever holds its pid next, and
nothing stays open once they are closed."""

import os
import subprocess
import sys
import time

import pytest

from integrations.runtime.process_accounts import ProcFiles, usage_of

SPIN = "import sys, time\nsys.stdin.readline()\nend = time.process_time() + 0.3\n" + (
    "while time.process_time() < end: pass\nsys.stdin.readline()\n"
)


@pytest.fixture
def files():
    kept = ProcFiles()
    yield kept
    kept.close()


def open_descriptors() -> set[str]:
    return set(os.listdir("/proc/self/fd"))


def test_each_read_is_the_process_as_it_is_now(files):
    process = subprocess.Popen([sys.executable, "-c", SPIN], stdin=subprocess.PIPE)
    try:
        before = usage_of(process.pid, files)
        process.stdin.write(b"go\n")
        process.stdin.flush()
        for _ in range(200):
            after = usage_of(process.pid, files)
            if after.cpu_seconds >= before.cpu_seconds + 0.25:
                break
            time.sleep(0.01)
        assert after.cpu_seconds >= before.cpu_seconds + 0.25
        assert (after.processes, after.threads) == (1, 1)
    finally:
        process.kill()
        process.wait()


def test_a_reaped_process_is_gone_and_its_files_closed(files):
    process = subprocess.Popen(["sleep", "30"])
    held = open_descriptors()
    assert usage_of(process.pid, files) is not None
    assert len(open_descriptors() - held) == 2  # its stat and its children, kept
    process.kill()
    process.wait()
    assert usage_of(process.pid, files) is None  # not the dead process's last figures
    assert open_descriptors() == held


def test_a_process_tree_is_walked_through_kept_files(files):
    parent = subprocess.Popen(
        [sys.executable, "-c", "import subprocess; subprocess.run(['sleep', '30'])"]
    )
    try:
        for _ in range(200):
            usage = usage_of(parent.pid, files)
            if usage.processes == 2:
                break
            time.sleep(0.01)
        assert usage.processes == 2
        for child in os.listdir(f"/proc/{parent.pid}/task"):
            with open(f"/proc/{parent.pid}/task/{child}/children") as listing:
                sleeper = int(listing.read().split()[0])
        os.kill(sleeper, 9)
        for _ in range(200):
            usage = usage_of(parent.pid, files)
            if usage is None or usage.processes == 1:
                break
            time.sleep(0.01)
        assert usage is None or usage.processes == 1  # the child's end is seen
    finally:
        parent.kill()
        parent.wait()


def test_closed_they_hold_nothing_and_read_by_path(files):
    held = open_descriptors()
    assert usage_of(os.getpid(), files) is not None
    assert open_descriptors() != held
    files.close()
    assert open_descriptors() == held
    assert usage_of(os.getpid(), files) is not None  # by path, keeping nothing
    assert open_descriptors() == held


def test_no_more_than_its_share_is_kept(files):
    held = open_descriptors()
    sleepers = [subprocess.Popen(["sleep", "30"]) for _ in range(ProcFiles.KEPT)]
    try:
        for sleeper in sleepers:
            assert usage_of(sleeper.pid, files) is not None
        assert len(open_descriptors() - held) == ProcFiles.KEPT
    finally:
        for sleeper in sleepers:
            sleeper.kill()
            sleeper.wait()


def test_all_workers_together_keep_no_more_than_the_hosts_budget(monkeypatch):
    monkeypatch.setattr(ProcFiles, "_host_budget", ProcFiles._host_kept + 3)
    held = open_descriptors()
    sleepers = [subprocess.Popen(["sleep", "30"]) for _ in range(2)]
    first, second = ProcFiles(), ProcFiles()
    try:
        assert usage_of(sleepers[0].pid, first) is not None  # its stat and children kept
        assert usage_of(sleepers[1].pid, second) is not None  # one more, then by path
        assert len(open_descriptors() - held) == 3
        first.close()
        assert usage_of(sleepers[1].pid, second) is not None  # the budget given back
        assert len(open_descriptors() - held) == 2
    finally:
        first.close()
        second.close()
        for sleeper in sleepers:
            sleeper.kill()
            sleeper.wait()
    assert open_descriptors() == held
