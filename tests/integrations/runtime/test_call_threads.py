"""The frame server's call threads: every call runs, at most the cap at once, threads kept."""

import threading

from integrations.runtime.call_threads import CallThreads


def _threads_named(prefix: str) -> list[threading.Thread]:
    return [thread for thread in threading.enumerate() if thread.name.startswith(prefix)]


def test_calls_beyond_the_cap_wait_for_a_free_thread_and_all_run():
    threads = CallThreads(3, "cap-test")
    release, lock = threading.Event(), threading.Lock()
    running, most_at_once, done = [0], [0], threading.Semaphore(0)

    def call():
        with lock:
            running[0] += 1
            most_at_once[0] = max(most_at_once[0], running[0])
        release.wait(5)
        with lock:
            running[0] -= 1
        done.release()

    for _ in range(10):
        threads.submit(call)
    assert len(_threads_named("cap-test")) == 3
    release.set()
    for _ in range(10):
        assert done.acquire(timeout=5)
    assert most_at_once[0] == 3

    # Idle again: the same three threads take the next calls; none is started.
    for _ in range(6):
        threads.submit(done.release)
    for _ in range(6):
        assert done.acquire(timeout=5)
    assert len(_threads_named("cap-test")) == 3


def test_a_call_that_raises_leaves_its_thread_serving(caplog):
    threads = CallThreads(1, "raise-test")
    done = threading.Event()

    def fails():
        raise RuntimeError("boom")

    threads.submit(fails)
    threads.submit(done.set)
    assert done.wait(5)
    assert len(_threads_named("raise-test")) == 1
    assert "a call's thread failed" in caplog.text


def test_a_thread_is_started_only_when_none_waits():
    threads = CallThreads(8, "reuse-test")
    for _ in range(20):
        finished = threading.Event()
        threads.submit(finished.set)
        assert finished.wait(5)
        # the thread counts itself idle just after the call: give it the moment it takes
        for _ in range(100):
            with threads._lock:
                if threads._idle == 1:
                    break
            threading.Event().wait(0.01)
    assert len(_threads_named("reuse-test")) == 1
