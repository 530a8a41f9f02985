"""The cache every web process shares (``CACHE_URL``, README): the database's on the embedded
default (its table made by ``migrate``, as ``make run`` runs it), Redis when configured, never
one process's memory; and the sessions of signed-in people read through it."""

import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest
from django.test import Client

from tests.factories import UserFactory

REPO = Path(__file__).resolve().parents[2]


def load_settings(**environment) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k not in ("CACHE_URL", "CACHE_KEY_PREFIX")}
    env |= {"DJANGO_SETTINGS_MODULE": "docplatform.settings", **environment}
    code = "import django; django.setup(); from django.conf import settings; "
    code += "c = settings.CACHES['default']; "
    code += "print(c['BACKEND'], c['LOCATION'], settings.SESSION_ENGINE, settings.SITE_RATES)"
    return subprocess.run(
        [sys.executable, "-c", code], cwd=REPO, env=env, capture_output=True, text=True, timeout=60
    )


def test_the_embedded_default_shares_the_database_cache_and_sessions_read_through_it():
    done = load_settings()
    assert done.returncode == 0, done.stderr
    backend, location, sessions, rates = done.stdout.split(" ", 3)
    assert (backend, location) == ("docplatform.cache_backends.DatabaseCache", "docplatform_cache")
    assert sessions == "django.contrib.sessions.backends.cached_db"
    assert "'search': '60/minute'" in rates


def test_redis_is_a_cache_url():
    done = load_settings(CACHE_URL="redis://127.0.0.1:6379/3")
    assert done.returncode == 0, done.stderr
    assert done.stdout.split()[:2] == [
        "docplatform.cache_backends.RedisCache",
        "redis://127.0.0.1:6379/3",
    ]


@pytest.mark.parametrize("url", ["locmemcache://", "dummycache://", "memcache://127.0.0.1:11211"])
def test_a_cache_one_process_keeps_to_itself_is_refused_by_name(url):
    done = load_settings(CACHE_URL=url)
    assert done.returncode != 0
    assert "ImproperlyConfigured: CACHE_URL must be a cache every web process shares" in (
        done.stderr
    )


@pytest.mark.slow
def test_migrate_makes_the_cache_table_as_make_run_does(tmp_path):
    database = tmp_path / "fresh.sqlite3"
    env = {k: v for k, v in os.environ.items() if k not in ("CACHE_URL", "CACHE_KEY_PREFIX")}
    env |= {
        "DJANGO_SETTINGS_MODULE": "docplatform.settings",
        "DATABASE_URL": f"sqlite:///{database}",
        "VAR_DIR": str(tmp_path),
        "DEBUG": "true",
    }
    done = subprocess.run(
        [sys.executable, "manage.py", "migrate", "--no-input"],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    with sqlite3.connect(database) as connection:
        tables = {row[0] for row in connection.execute("SELECT name FROM sqlite_master")}
    assert "docplatform_cache" in tables


@pytest.mark.django_db
def test_a_signed_out_session_is_gone_from_the_cache_too():
    user = UserFactory(username="carol")
    user.set_password("carols-password")
    user.save()
    browser = Client()
    browser.post("/marketplace/login/", {"username": "carol", "password": "carols-password"})
    cookie = browser.cookies["sessionid"].value
    assert browser.get("/s/").status_code == 200
    browser.post("/marketplace/logout/")
    stolen = Client()
    stolen.cookies["sessionid"] = cookie
    assert stolen.get("/s/").status_code == 302  # to sign in: the session is nowhere


@pytest.fixture
def redis_cache():
    """The platform's Redis cache under a key prefix of this test's own."""
    from docplatform.cache_backends import RedisCache
    from tests.redis_keys import delete_keys, new_prefix, redis_url

    url, prefix = redis_url(), new_prefix("counter")
    try:
        yield RedisCache(url, {"KEY_PREFIX": prefix})
    finally:
        delete_keys(url, prefix)


def test_a_redis_counter_counts_every_increment_once_and_keeps_its_first_expiry(redis_cache):
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(8) as pool:
        counts = list(pool.map(lambda _: redis_cache.count("hits", 30), range(64)))
    assert sorted(counts) == list(range(1, 65))  # no two callers saw the same count
    assert redis_cache.get("hits") == 64  # read back as the number it is
    client = redis_cache._cache.get_client()
    key = redis_cache.make_key("hits")
    client.expire(key, 5)  # as if made 25 s ago: a later count does not extend the window
    redis_cache.count("hits", 30)
    assert 0 < client.ttl(key) <= 5
    client.delete(key)
    assert redis_cache.count("hits", 30) == 1 and 25 < client.ttl(key) <= 30


def test_a_rate_limit_counts_in_redis_and_the_window_ends(redis_cache, monkeypatch):
    from docplatform import rate_limits

    monkeypatch.setattr(rate_limits, "cache", redis_cache)
    waits = [rate_limits.wait_seconds("someone", 2, 60) for _ in range(3)]
    assert waits[:2] == [0, 0] and 1 <= waits[2] <= 60  # the third waits for the next window
    assert rate_limits.wait_seconds("someone-else", 2, 60) == 0


def test_redis_is_waited_for_at_most_cache_timeout_seconds_which_must_be_above_zero():
    code = "import django; django.setup(); from django.conf import settings; "
    code += "print(settings.CACHES['default']['OPTIONS'])"
    env = {k: v for k, v in os.environ.items() if k not in ("CACHE_URL", "CACHE_KEY_PREFIX")}
    env |= {"DJANGO_SETTINGS_MODULE": "docplatform.settings", "CACHE_URL": "redis://h:6379/0"}

    def started(seconds: str) -> subprocess.CompletedProcess:
        return subprocess.run(
            [sys.executable, "-c", code],
            cwd=REPO,
            env={**env, "CACHE_TIMEOUT_SECONDS": seconds},
            capture_output=True,
            text=True,
            timeout=60,
        )

    done = started("0.25")
    assert done.returncode == 0, done.stderr
    assert "'socket_connect_timeout': 0.25, 'socket_timeout': 0.25" in done.stdout
    refused = started("0")
    assert refused.returncode != 0
    assert "CACHE_TIMEOUT_SECONDS must be a number of at least 0.01, not '0'" in refused.stderr
