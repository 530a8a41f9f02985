"""Redis for the tests: ``TEST_REDIS_URL`` alone names the server and database a test that
needs Redis may write in (skipped without it), and every use of it writes under a key prefix
of its own (``new_prefix``) and deletes only the keys under that prefix when it is done: the
suite never empties a database, so it runs beside anything else on the same Redis.

The run's own prefix (``RUN_PREFIX``, set by tests/settings.py) holds the keys of the run's
broker when ``CELERY_BROKER_URL`` is Redis (``CELERY_BROKER_KEY_PREFIX``) and of the webhook
limits (``WEBHOOK_LIMITS_KEY_PREFIX``); what is left under it is deleted at the end of the run
(tests/conftest.py).
"""

import os
import uuid

import pytest

RUN_PREFIX = os.environ["TEST_REDIS_KEY_PREFIX"]
SKIP_REASON = (
    "needs Redis: set TEST_REDIS_URL to a server and database the tests may write keys in "
    "(e.g. redis://127.0.0.1:6379/9; the tests write under key prefixes of their own and "
    "delete only those)"
)


def client(url: str):
    import redis

    return redis.Redis.from_url(url, socket_connect_timeout=2, socket_timeout=10)


def redis_url() -> str:
    """``TEST_REDIS_URL``, answering; the test is skipped when it is unset."""
    import redis

    url = os.environ.get("TEST_REDIS_URL", "")
    if not url:
        pytest.skip(SKIP_REASON)
    try:
        client(url).ping()
    except redis.RedisError as error:
        pytest.fail(f"TEST_REDIS_URL ({url}) does not answer: {error}")
    return url


def new_prefix(name: str) -> str:
    """A key prefix no other use of Redis in this run (or any other run) has."""
    return f"{RUN_PREFIX}{name}-{uuid.uuid4().hex[:8]}:"


def delete_keys(url: str, prefix: str) -> int:
    """Delete the keys under ``prefix`` (and nothing else); how many there were."""
    connection = client(url)
    keys = list(connection.scan_iter(match=f"{prefix}*", count=1000))
    for start in range(0, len(keys), 500):
        connection.delete(*keys[start : start + 500])
    return len(keys)
