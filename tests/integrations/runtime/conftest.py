import pytest

from .support import EnvelopeClient, RunningHost

# Small limits keep the hostile-script tests fast.
HOST_ENVIRONMENT = {
    "RUNTIME_CALL_TIMEOUT": "2",
    "RUNTIME_QUEUE_TIMEOUT": "1.5",  # below the call timeout; a spare may take 1 s to start
    "RUNTIME_WORKERS_PER_VERSION": "2",
    "RUNTIME_MAX_QUEUED": "32",  # test_many_concurrent_calls_are_all_served: 24 at once
    "RUNTIME_WORKER_MEMORY_MB": "256",
    "RUNTIME_MAX_ENVELOPE_MB": "1",
    # What a hostile script must not see, although the host's own environment has it.
    "DATABASE_URL": "postgres://platform:database-password@db.internal/platform",
    "DJANGO_SETTINGS_MODULE": "docplatform.settings",
    "SECRET_KEY": "platform-secret-key",
}


def start_host(tmp_path_factory, open_files=None, **overrides) -> RunningHost:
    log = tmp_path_factory.mktemp("runtime") / "host.log"
    return RunningHost("test-runtime-key", log, open_files, **{**HOST_ENVIRONMENT, **overrides})


@pytest.fixture(scope="module")
def runtime_host(tmp_path_factory):
    host = start_host(tmp_path_factory)
    yield host
    host.stop()


@pytest.fixture(scope="module", params=["frames", "http"])
def client(request, tmp_path_factory):
    """Envelopes in frames (the platform's default; calls carried on the host's event loop)
    to the module's host, and over HTTP (on a host's threads) to a host of their own: each
    test of the protocol holds on both, from a host that has seen none of the other's."""
    if request.param == "frames":
        yield EnvelopeClient(request.getfixturevalue("runtime_host"), "frames")
        return
    host = start_host(tmp_path_factory)
    yield EnvelopeClient(host, "http")
    host.stop()
