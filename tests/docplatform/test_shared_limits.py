"""Limits held across processes: with two gunicorn worker processes, one address gets exactly
the configured number of ratings a minute on a site, and of anonymous API calls (the beacon),
not twice as many; the counts live in the shared cache (README, "CACHE_URL"). A sign-in locked
after the configured failures is locked in every process (django-axes counts in the database).

Real parts: gunicorn serving the platform with 2 sync workers (each request answered by one
process, several at once), the test's database, and the shared cache as configured: the
embedded default (the database cache, in the test database) and Redis (``TEST_REDIS_URL``,
under a key prefix of the test's own; skipped without it). The gunicorn access log names the
process of each answer: both took requests.
"""

import re
import time
import uuid
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager

import pytest
import requests

from docplatform.revisions import space_content_update
from tests.factories import SiteFactory, SpaceFactory, UserFactory
from tests.network import free_port
from tests.processes import BIN, platform_env, start, stop
from tests.redis_keys import delete_keys, new_prefix, redis_url

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]

RATINGS, CALLS = 4, 6  # per minute, as configured below
LOGIN_FAILURES = 3
SENT = 24  # requests of each kind, 8 at a time


@pytest.fixture(params=["database", "redis"])
def shared_cache(request):
    """The environment selecting the shared cache, under a key prefix of this test's own."""
    if request.param == "database":
        yield {"CACHE_URL": "dbcache://docplatform_cache", "CACHE_KEY_PREFIX": uuid.uuid4().hex}
        return
    url, prefix = redis_url(), new_prefix("shared-limits")
    try:
        yield {"CACHE_URL": url, "CACHE_KEY_PREFIX": prefix}
    finally:
        delete_keys(url, prefix)


@contextmanager
def two_workers(tmp_path, environment: dict):
    """gunicorn, 2 worker processes of one thread each; yields (its address, the sites host,
    the access log's path)."""
    port = free_port()
    sites_host = f"127.0.0.2:{port}"
    access_log = tmp_path / "access.log"
    env = platform_env(
        PLATFORM_URL=f"http://localhost:{port}",
        INTEGRATIONS_URL=f"http://127.0.0.1:{port}",
        SITES_URL=f"http://{sites_host}",
        SITE_FEEDBACK_RATE=f"{RATINGS}/minute",
        API_THROTTLE_ANON=f"{CALLS}/minute",
        LOGIN_FAILURE_LIMIT=str(LOGIN_FAILURES),
        TRUSTED_PROXY_COUNT="1",
        LOG_LEVEL="WARNING",
        **environment,
    )
    command = [str(BIN / "gunicorn"), "--bind", f"127.0.0.1:{port}", "--workers", "2",
               "--timeout", "60", "--access-logfile", str(access_log),
               "--access-logformat", "%(p)s %(s)s %(U)s", "docplatform.wsgi"]  # fmt: skip
    process = start(command, env, tmp_path / "web.log")
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 30
        while True:
            assert process.poll() is None, (tmp_path / "web.log").read_text()
            try:
                requests.get(f"{base}/api/v1/me/", timeout=10)
                break
            except requests.ConnectionError:
                assert time.monotonic() < deadline, "the web server did not start"
                time.sleep(0.1)
        yield base, sites_host, access_log
    finally:
        stop(process)


def answers(send) -> list[int]:
    """The status of SENT requests ``send(address)`` makes from one client address, 8 at a
    time, all within one window of the rates. A burst that crossed the minute is sent again
    from another address (the proxy in front says which: TRUSTED_PROXY_COUNT=1), whose
    counts start from nothing."""
    for attempt in range(3):
        address = f"198.51.100.{10 + attempt}"
        window = int(time.time() // 60)
        with ThreadPoolExecutor(max_workers=8) as pool:
            statuses = [answer.status_code for answer in pool.map(send, [address] * SENT)]
        if int(time.time() // 60) == window:
            return statuses
    raise AssertionError("three bursts in a row crossed a minute")


def sign_in(base: str, host: str, password: str) -> requests.Response:
    """The marketplace's sign-in form, filled as a browser does (its CSRF token and cookie)."""
    with requests.Session() as browser:
        form = browser.get(f"{base}/marketplace/login/", headers={"Host": host}, timeout=30)
        token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', form.text).group(1)
        return browser.post(
            f"{base}/marketplace/login/",
            data={"username": "alice", "password": password, "csrfmiddlewaretoken": token},
            headers={"Host": host, "Connection": "close"},
            timeout=30,
            allow_redirects=False,
        )


def test_one_address_gets_the_configured_ratings_and_api_calls_whatever_process_answers(
    tmp_path, organization, shared_cache
):
    space = SpaceFactory(organization=organization, title="Handbook", visibility="public")
    pages = [{"path": "intro", "title": "Introduction", "body": "Hello."}]
    space_content_update(space=space, pages=pages, message="First")
    site = SiteFactory(organization=organization, title="Docs")
    site.spaces.add(space)
    alice = UserFactory(username="alice")
    alice.set_password("the-right-password")
    alice.save()

    with two_workers(tmp_path, shared_cache) as (base, sites_host, access_log):
        port = base.rsplit(":", 1)[1]
        feedback = f"{base}/{site.pk}/{space.pk}/-/feedback"
        ratings = answers(
            lambda address: requests.post(
                feedback,
                json={"page": "intro", "rating": "good"},
                headers={"Host": sites_host, "X-Forwarded-For": address, "Connection": "close"},
                timeout=30,
            )
        )
        beacon = f"{base}/api/v1/beacon/sites/{site.pk}/views/"
        page = f"http://{sites_host}/{site.pk}/{space.pk}/intro"
        calls = answers(
            lambda address: requests.post(
                beacon,
                json={"url": page},
                headers={
                    "Host": f"localhost:{port}",
                    "X-Forwarded-For": address,
                    "Connection": "close",
                },
                timeout=30,
            )
        )
        platform = f"localhost:{port}"
        failures = [sign_in(base, platform, "a-wrong-guess").status_code for _ in range(3)]
        with ThreadPoolExecutor(max_workers=8) as pool:
            locked = list(
                pool.map(lambda _: sign_in(base, platform, "the-right-password"), range(8))
            )
        log = access_log.read_text().splitlines()

    assert sorted(ratings) == [200] * RATINGS + [429] * (SENT - RATINGS), ratings
    assert sorted(calls) == [204] * CALLS + [429] * (SENT - CALLS), calls
    assert failures == [200] * (LOGIN_FAILURES - 1) + [429], failures
    assert [answer.status_code for answer in locked] == [429] * 8, locked
    # Both processes answered ratings, calls and sign-ins: each counted in the same place.
    for path in ("/-/feedback", "/beacon/", "/marketplace/login/"):
        processes = {line.split()[0] for line in log if path in line}
        assert len(processes) == 2, log
