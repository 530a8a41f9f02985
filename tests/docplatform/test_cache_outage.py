"""The shared cache on a Redis that does not answer (``docplatform.cache_backends``): the API,
sessions and rate limits go on without it (reads miss, writes are dropped, limits fail open),
one warning says so, a hung Redis holds a request at most once per interval, and a Redis back
is used again.

Real parts: a Redis port nothing listens on, a server that accepts and never answers, and a
``redis-server`` of the test's own that stops and starts again."""

import logging
import shutil
import subprocess
import time

import pytest
import redis
from django.core.cache import cache

from docplatform import cache_backends, rate_limits
from docplatform.services import api_token_create
from tests.api_helpers import API, api_client
from tests.network import SilentServer, free_port

OUTAGE_LOG = "the shared cache (Redis) does not answer"
BACK_LOG = "the shared cache (Redis) answers again"


def redis_cache(settings, url: str, timeout: float = 0.5):
    """The shared cache, pointed at ``url`` (Django's cache handler is reset on the change)."""
    settings.CACHES = {
        "default": {
            "BACKEND": "docplatform.cache_backends.RedisCache",
            "LOCATION": url,
            "OPTIONS": {"socket_connect_timeout": timeout, "socket_timeout": timeout},
        }
    }


def warnings_of(caplog, text: str) -> list:
    return [r for r in caplog.records if r.levelno == logging.WARNING and text in r.getMessage()]


@pytest.mark.django_db
def test_with_redis_stopped_the_api_sessions_and_limits_go_on(settings, caplog, org_admin):
    redis_cache(settings, f"redis://127.0.0.1:{free_port()}/0")  # nothing listens there
    _row, token = api_token_create(user=org_admin, name="outage")
    by_token = api_client(token=token)
    for _ in range(3):
        answer = by_token.get(f"{API}/me/")
        assert answer.status_code == 200, answer.content
        assert answer.json()["username"] == org_admin.username
    # Signed in by the session (stored in the database as well): read back without the cache.
    signed_in = api_client(org_admin)
    assert signed_in.get(f"{API}/me/").json()["username"] == org_admin.username
    # Reads miss, writes are dropped, nothing raises; a limit fails open.
    cache.set("kept", 1)
    assert cache.get("kept", "missed") == "missed"
    assert cache.add("first", 1) is True
    assert [rate_limits.wait_seconds("outage", 1, 60) for _ in range(3)] == [0, 0, 0]
    assert len(warnings_of(caplog, OUTAGE_LOG)) == 1  # one warning, not one per request


@pytest.mark.django_db
def test_a_hung_redis_holds_one_request_per_interval_not_each(settings, caplog):
    silent = SilentServer()
    try:
        redis_cache(settings, f"redis://127.0.0.1:{silent.port}/0", timeout=0.3)
        started = time.monotonic()
        assert cache.get("any", "missed") == "missed"
        assert time.monotonic() - started < 5  # the timeout, not the system's minutes
        tried = silent.accepted
        assert tried >= 1
        for _ in range(20):  # within the interval: Redis is not asked again
            assert cache.get("any", "missed") == "missed"
            assert rate_limits.counted("hung", 60) == 1
        assert silent.accepted == tried
        assert len(warnings_of(caplog, OUTAGE_LOG)) == 1
    finally:
        silent.close()


def start_redis(port: int) -> subprocess.Popen:
    server = subprocess.Popen(
        [
            "redis-server",
            "--port",
            str(port),
            "--bind",
            "127.0.0.1",
            "--save",
            "",
            "--appendonly",
            "no",
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    client = redis.Redis(port=port, socket_connect_timeout=0.2)
    for _ in range(100):
        try:
            client.ping()
            return server
        except redis.ConnectionError:
            time.sleep(0.05)
    server.kill()
    raise RuntimeError("redis-server did not start")


def stop_redis(server: subprocess.Popen):
    server.terminate()
    server.wait(timeout=10)


@pytest.mark.skipif(shutil.which("redis-server") is None, reason="needs redis-server")
@pytest.mark.django_db
def test_a_redis_back_is_used_again(settings, caplog, monkeypatch):
    monkeypatch.setattr(cache_backends, "OUTAGE_RETRY_SECONDS", 0.2)
    port = free_port()
    server = start_redis(port)
    try:
        redis_cache(settings, f"redis://127.0.0.1:{port}/0")
        cache.set("key", "before")
        assert cache.get("key") == "before"
        assert rate_limits.counted("back", 60) == 1
        assert rate_limits.counted("back", 60) == 2
        stop_redis(server)
        assert cache.get("key", "missed") == "missed"
        assert len(warnings_of(caplog, OUTAGE_LOG)) == 1
        server = start_redis(port)  # its data gone (no persistence): a fresh Redis
        time.sleep(0.3)  # the interval passes: the next operation asks Redis again
        cache.set("key", "after")
        assert cache.get("key") == "after"
        assert rate_limits.counted("back", 60) == 1
        assert len(warnings_of(caplog, BACK_LOG)) == 1
    finally:
        stop_redis(server)
