"""Test settings: the project's settings with what tests need to be fast and isolated.

The database and the broker still come from DATABASE_URL and CELERY_BROKER_URL, so CI runs
the suite on PostgreSQL and Redis and a fresh machine on SQLite and the file-system broker.
"""

import os
import tempfile
import uuid
from pathlib import Path

# Keys of the test run's own (production refuses to derive them); kept in the environment, so
# the commands and hosts that tests start in subprocesses share them.
os.environ.setdefault("SECRET_KEY", "test-only-secret-key-" + "x" * 40)
os.environ.setdefault("ENCRYPTION_KEYS", "Z8mQ0a2kK7bqzQ7F0lqz1wVYc4h2W5lEwCq2mYyqJ4w=")
os.environ.setdefault("RUNTIME_SIGNING_KEY", "test-only-runtime-signing-key")

# The metrics' per-process files (prometheus_client's multiprocess mode) of the test run's
# own, so /metrics in a test counts this run's processes only.
os.environ.setdefault(
    "PROMETHEUS_MULTIPROC_DIR", tempfile.mkdtemp(prefix="docplatform-test-metrics-")
)

# Redis keys of the test run's own: a Redis broker (CELERY_BROKER_URL) and the webhook limits
# keep their keys under this prefix, so the run never takes or changes what another user of
# the same Redis database has (tests/redis_keys.py). In the environment, so the processes that
# tests start use the same keys (or the prefixes of a private broker they are given).
if "TEST_REDIS_KEY_PREFIX" not in os.environ:  # the run's own process, not one it started
    _run = os.environ["TEST_REDIS_KEY_PREFIX"] = f"docplatform-test-{uuid.uuid4().hex[:12]}:"
    os.environ["CELERY_BROKER_KEY_PREFIX"] = f"{_run}broker:"
    os.environ["WEBHOOK_LIMITS_KEY_PREFIX"] = f"{_run}limits:"

from docplatform.settings import *  # noqa: F403
from docplatform.settings import CELERY_BROKER_URL

# The cache (README, "CACHE_URL"): what a test's process keeps, each test starting with it empty
# (tests/conftest.py). With TEST_REDIS_URL, Redis, under the run's prefix (its ``clear``
# deletes only those keys: tests/cache_backends.py), as production runs; without, this
# process's memory. Processes a test starts that must share one cache (tests/test_shared_limits.py)
# are given a CACHE_URL of the test's own.
if "CACHE_URL" not in os.environ:
    if os.environ.get("TEST_REDIS_URL"):
        CACHES = {
            "default": {
                "BACKEND": "tests.cache_backends.RunRedisCache",
                "LOCATION": os.environ["TEST_REDIS_URL"],
                "KEY_PREFIX": os.environ["TEST_REDIS_KEY_PREFIX"] + "cache",
            }
        }
    else:
        CACHES = {"default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"}}

PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]

# Every payload the tests fire is checked against its event type's JSON Schema.
EVENT_PAYLOAD_CHECKS = True

# pytest-django's live server answers as http://localhost:<port>: the platform is that host,
# and the integrations origin 127.0.0.1 (another host, so a browser keeps their cookies apart).
# The ``origins`` fixture (and ``runtime``) adds the live server's port; processes that tests
# start are given both in their environment.
PLATFORM_URL = os.environ.get("PLATFORM_URL", "http://localhost:8000").rstrip("/")
INTEGRATIONS_URL = os.environ.get("INTEGRATIONS_URL", "http://127.0.0.1:8000").rstrip("/")

# A broker folder of the test run's own, so a running `make run` never sees test messages.
if CELERY_BROKER_URL.startswith("filesystem://"):
    # Kept in the environment so worker processes that tests start share the same folder.
    _queue = Path(
        os.environ.setdefault(
            "TEST_BROKER_DIR", tempfile.mkdtemp(prefix="docplatform-test-broker-")
        )
    )
    CELERY_BROKER_TRANSPORT_OPTIONS = {
        "data_folder_in": str(_queue),
        "data_folder_out": str(_queue),
        "store_processed": False,
        "polling_interval": 0.05,
        "control_folder": str(_queue / "control"),
    }

# Lets two suites run side by side on one PostgreSQL server (each with its own test database).
if "TEST_DATABASE_NAME" in os.environ:
    DATABASES["default"]["TEST"] = {"NAME": os.environ["TEST_DATABASE_NAME"]}  # noqa: F405
elif DATABASES["default"]["ENGINE"] == "django.db.backends.sqlite3":  # noqa: F405
    # A file, not SQLite's shared in-memory database: worker threads then wait on locks
    # (WAL and the busy timeout) instead of failing with "table is locked".
    DATABASES["default"]["TEST"] = {  # noqa: F405
        "NAME": str(Path(tempfile.mkdtemp(prefix="docplatform-test-db-")) / "test.sqlite3")
    }

# Connections closed after each task and request, as Django's test runner expects: the test
# database is dropped at the end, which an open connection of a worker thread would prevent.
CELERY_DB_REUSE_MAX = None
DATABASES["default"]["CONN_MAX_AGE"] = 0  # noqa: F405

# A real OAuth 2 authorization server for the OAuth tests (django-oauth-toolkit, in the test
# extra), served by the live test server through tests/integrations/oauth_provider.py. The
# product never depends on it.
INSTALLED_APPS = [*INSTALLED_APPS, "oauth2_provider"]  # noqa: F405
OAUTH2_PROVIDER = {"SCOPES": {"projects:read": "Read your projects"}, "PKCE_REQUIRED": False}

# Each call's log line written once its answer is sent, in the request's own transaction
# rules (tests read it at once); the batches' writer is tested on its own
# (tests/integrations/test_log_batches.py).
RUNTIME_LOG_BATCH_SECONDS = 0
# Likewise, what a request leaves for after its answer is done by its own thread (tests read
# the kept markup at once); the thread is tested on its own (tests/integrations/
# test_later_work.py).
RUNTIME_AFTER_ANSWER_THREAD = False
