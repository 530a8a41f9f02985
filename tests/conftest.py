import os
import resource
import shutil
import time
import uuid
from contextlib import contextmanager
from pathlib import Path

import pytest
import yaml
from django.conf import settings
from django.core.management import call_command
from django.db import connection, connections
from django.db.migrations.executor import MigrationExecutor

from docplatform.change_feed import feed
from tests.browser import CHROMIUM, CHROMIUM_ARGS
from tests.factories import MembershipFactory, OrganizationFactory, UserFactory
from tests.redis_keys import RUN_PREFIX, client, delete_keys, new_prefix
from tests.webhook_receiver import start_receiver, stop_receiver


@pytest.fixture(autouse=True)
def change_feed_closed():
    """The change feed's connection (this process's own, to the test database), when a test
    opened it, closed at its end: the test database is dropped with no session left on it."""
    yield
    feed.close()


@pytest.fixture
def organization(db):
    return OrganizationFactory(subdomain="acme")


@pytest.fixture
def org_admin(organization):
    return MembershipFactory(organization=organization, role="admin").user


@pytest.fixture
def org_member(organization):
    return MembershipFactory(organization=organization, role="member").user


@pytest.fixture
def org_reader(organization):
    return MembershipFactory(organization=organization, role="reader").user


@pytest.fixture
def outsider(db):
    return UserFactory()


@pytest.fixture
def people(org_admin, org_member, org_reader):
    """acme's admin, member and reader, and an admin of another organization (globex)."""
    stranger = MembershipFactory(organization=OrganizationFactory(subdomain="globex"), role="admin")
    return {
        "admin": org_admin,
        "member": org_member,
        "reader": org_reader,
        "outsider": stranger.user,
    }


def _redis_urls_of_the_run() -> list[str]:
    """The Redis databases the run writes in: TEST_REDIS_URL's and a Redis broker's."""
    urls = [os.environ.get("TEST_REDIS_URL", "")]
    for url in (settings.CELERY_BROKER_URL, settings.WEBHOOK_LIMITS_URL):
        if url.startswith(("redis://", "rediss://")):
            urls.append(url)
    return list(dict.fromkeys(url for url in urls if url))


@pytest.fixture(scope="session", autouse=True)
def redis_left_as_found():
    """The run touches nothing in Redis it did not make: a key outside the run's prefixes,
    written before the first test into each Redis database the run uses, is still there,
    unchanged, after the last (every fixture torn down, the run's keys deleted); an error
    of the last test's teardown says so otherwise. First instantiated, last torn down."""
    canaries = {}
    for url in _redis_urls_of_the_run():
        key, value = f"docplatform-test-canary:{uuid.uuid4().hex}", uuid.uuid4().hex
        client(url).set(key, value)
        canaries[url] = key, value
    yield
    touched = []
    for url in _redis_urls_of_the_run():
        delete_keys(url, RUN_PREFIX)
    for url, (key, value) in canaries.items():
        found = client(url).get(key)
        client(url).delete(key)
        if found != value.encode():
            touched.append(url)
    assert not touched, f"the run deleted or changed a key it did not make in {touched}"


@pytest.fixture
def space_spec():
    """What the ``space`` fixture makes; a module (or a folder's conftest.py) that needs more
    overrides this fixture: fields of the space (``title``, ``visibility``...), ``pages`` (its
    first revision, written by ``space_content_update`` as a person would, by ``author`` with
    ``message``), or ``paths`` (a revision of factory pages at those paths, no event fired).
    Without pages nor paths the space has an empty revision; ``"revision": False``, none."""
    return {}


@pytest.fixture
def space(organization, space_spec):
    """A space of acme, as ``space_spec`` says."""
    from docplatform.revisions import space_content_update
    from tests.factories import PageFactory, RevisionFactory, SpaceFactory

    fields = dict(space_spec)
    pages, paths = fields.pop("pages", None), fields.pop("paths", ())
    author, message = fields.pop("author", None), fields.pop("message", None)
    with_revision = fields.pop("revision", True)
    space = SpaceFactory(organization=organization, **fields)
    if not with_revision:
        return space
    if pages is not None:
        extra = {"message": message} if message else {}
        space_content_update(space=space, pages=pages, author=author, **extra)
        space.refresh_from_db()
    else:
        revision = RevisionFactory(space=space, **({"message": message} if message else {}))
        for path in paths:
            PageFactory(revision=revision, **({"path": path} if path else {}))
        space.current_revision = revision
        space.save()
    return space


@pytest.fixture(scope="session")
def celery_session_worker(django_db_setup, django_db_blocker):
    """A real Celery worker in threads, consuming every queue of the configured broker.

    One for the whole run (starting a worker takes a second); tests reach it through
    ``celery_worker``, which also gives them a database the worker's threads can see.
    """
    from celery.contrib.testing.worker import start_worker

    from docplatform.celery import app

    # What an earlier run left in the broker's folder; on Redis the run's queues are under its
    # own key prefix (tests/settings.py), so this empties nothing of anyone else's.
    app.control.purge()
    with start_worker(
        app,
        pool="threads",
        concurrency=4,
        perform_ping_check=False,
        queues=settings.CELERY_WORKER_QUEUES,
    ) as worker:
        yield worker


@pytest.fixture
def celery_worker(celery_session_worker, transactional_db):
    return celery_session_worker


class Migrations:
    """The test database migrated back to ``targets`` (Django's ``[(app, migration)]``) and
    the models as they were there (``apps.get_model``); ``latest()`` takes it forward again."""

    def __init__(self):
        self.leaves = MigrationExecutor(connection).loader.graph.leaf_nodes()

    def __call__(self, targets):
        executor = MigrationExecutor(connection)
        executor.migrate(targets)
        return executor.loader.project_state(targets).apps

    def latest(self):
        return self(self.leaves)


@pytest.fixture
def migrate_to(transactional_db):
    """A data migration's test: its rows written by the models before it, read after it.
    Afterwards the database is at the latest migrations again, and emptied."""
    migrations = Migrations()
    yield migrations
    migrations.latest()
    call_command("flush", verbosity=0, interactive=False)


def wait_until(condition, *, timeout=20.0, interval=0.05):
    """Poll ``condition`` until it is true; fail with a clear message after ``timeout``."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return
        time.sleep(interval)
    raise AssertionError(f"condition not met within {timeout} s")


@pytest.fixture(scope="session")
def runtime_host(tmp_path_factory):
    """A real runtime host process, started as operators start it (with the platform's key)."""
    from integrations.environment import runtime_signing_key
    from tests.integrations.runtime.support import RunningHost

    host = RunningHost(
        runtime_signing_key(),
        tmp_path_factory.mktemp("runtime") / "host.log",
        RUNTIME_CALL_TIMEOUT="3",
        RUNTIME_WORKERS_PER_VERSION="1",
        RUNTIME_ALLOWED_NETWORKS="127.0.0.0/8",  # the tests' OAuth provider and servers
    )
    yield host
    host.stop()


@pytest.fixture(autouse=True)
def code_checks_runtime(request, settings):
    """Publishing code asks the runtime host to load it (the checks that run the code), and
    refuses when it cannot: every test's platform reaches the session's real host unless the
    test points RUNTIME_URL elsewhere itself."""
    settings.RUNTIME_URL = request.getfixturevalue("runtime_host").frames_url


@pytest.fixture
def origins(settings, live_server):
    """The live test server as the platform (``live_server.url``, on localhost) and as the
    integrations origin (the same server as 127.0.0.1: another host for a browser)."""
    settings.PLATFORM_URL = live_server.url
    settings.INTEGRATIONS_URL = live_server.url.replace("://localhost:", "://127.0.0.1:")
    assert settings.INTEGRATIONS_URL != settings.PLATFORM_URL
    return settings


@pytest.fixture
def runtime(runtime_host, settings, origins):
    """The platform wired to the runtime host: envelopes go there, and the environment's
    API endpoint and public endpoints point at the live test server."""
    settings.RUNTIME_URL = runtime_host.frames_url
    return runtime_host


@pytest.fixture(autouse=True)
def fresh_cache():
    """Each test starts with an empty cache: the API throttles count there, per user id and
    address, and ids repeat between tests. On Redis only the run's keys are deleted
    (tests/cache_backends.py)."""
    from django.core.cache import cache

    cache.clear()


def _reset_broker_pools(app) -> None:
    app._pool = None
    app.amqp._producer_pool = None


@contextmanager
def broker_unreachable():
    """Point the Celery app at a port where no broker listens (connection refused)."""
    from docplatform.celery import app

    saved = app.conf.broker_write_url, app.conf.broker_transport_options
    app.conf.broker_write_url = "redis://127.0.0.1:9/0"
    app.conf.broker_transport_options = {}
    _reset_broker_pools(app)
    try:
        yield
    finally:
        app.conf.broker_write_url, app.conf.broker_transport_options = saved
        _reset_broker_pools(app)


class PrivateBroker:
    """A broker of a test's own (keys under a prefix of its own on the run's Redis broker, or
    another folder), so the suite's in-process worker never takes its tasks: the test counts
    them, or starts workers on it (``env``: the broker and its prefix)."""

    def __init__(self, tmp_path):
        self.env = {}
        self.url = settings.CELERY_BROKER_URL
        self.folder = None
        self.prefix = ""
        if self.url.startswith("filesystem://"):
            self.folder = tmp_path / "broker" / "queue"
            self.folder.mkdir(parents=True)
            self.env["VAR_DIR"] = str(tmp_path)
            self.transport_options = {
                "data_folder_in": str(self.folder),
                "data_folder_out": str(self.folder),
                "control_folder": str(tmp_path / "broker" / "control"),
                "store_processed": False,
                "polling_interval": 0.05,
            }
        else:  # Redis: the run's broker, under a key prefix of this test's own
            self.prefix = new_prefix("private-broker")
            self.transport_options = {
                **settings.CELERY_BROKER_TRANSPORT_OPTIONS,
                "global_keyprefix": self.prefix,
            }
            self.env["CELERY_BROKER_KEY_PREFIX"] = self.prefix
        self.env["CELERY_BROKER_URL"] = self.url

    def _redis(self):
        from tests.redis_keys import client

        return client(self.url)

    def empty(self) -> None:
        if self.folder is None:
            delete_keys(self.url, self.prefix)
        else:
            for message in self.folder.glob("*.msg"):
                message.unlink()

    def tasks(self, queue: str) -> list[str]:
        """The names of the tasks waiting in ``queue``, in the order they were sent."""
        import json

        if self.folder is None:
            client = self._redis()
            # kombu pushes at the head of the list and takes from its tail: oldest last.
            keys = client.keys(f"{self.prefix}{queue}*")
            raw = [m for key in keys for m in client.lrange(key, 0, -1)[::-1]]
        else:
            raw = [path.read_bytes() for path in sorted(self.folder.glob(f"*.{queue}.msg"))]
        return [json.loads(message)["headers"]["task"] for message in raw]


@pytest.fixture
def private_broker(tmp_path):
    from docplatform.celery import app

    broker = PrivateBroker(tmp_path)
    broker.empty()
    saved = app.conf.broker_write_url, app.conf.broker_transport_options
    app.conf.broker_write_url = broker.url
    app.conf.broker_transport_options = broker.transport_options
    _reset_broker_pools(app)
    try:
        yield broker
    finally:
        app.conf.broker_write_url, app.conf.broker_transport_options = saved
        _reset_broker_pools(app)
        broker.empty()


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_teardown(item, nextitem):
    """Before a test's fixtures are torn down (a transactional test's database is flushed
    then), let the session's Celery worker finish what it is running: once started, it takes
    the tasks of every later test too, and a task writing rows while the flush truncates the
    tables deadlocks it on PostgreSQL. Waits only while tasks are running (the worker runs in
    this process's threads; a retry waiting for its countdown is not running), nor taken and
    about to run (reserved: it would start during the flush), up to 15 s."""
    from celery.worker import state

    deadline = time.monotonic() + 15
    while (state.active_requests or state.reserved_requests) and time.monotonic() < deadline:
        time.sleep(0.05)


@pytest.fixture
def receiver():
    """A real local HTTP webhook receiver (tests/webhook_receiver.py)."""
    receiver = start_receiver()
    yield receiver
    stop_receiver(receiver)


@pytest.fixture
def webhook_settings(settings):
    """Loopback allowed (the receiver runs here) and short retry delays."""
    settings.WEBHOOK_ALLOWED_NETWORKS = ["127.0.0.0/8", "::1/128"]
    settings.WEBHOOK_RETRY_BASE_DELAY = 0.05
    settings.WEBHOOK_RESPONSE_TIMEOUT = 2.0
    return settings


@pytest.fixture
def browser_page(monkeypatch):
    """A page of Debian's Chromium driven by Playwright (tests/browser.py); the test is skipped
    when either is missing."""
    sync_api = pytest.importorskip("playwright.sync_api")
    if not shutil.which(CHROMIUM):
        pytest.skip(f"Chromium is not installed at {CHROMIUM}")
    # Playwright's sync API runs an event loop in this thread; the test's own ORM calls are
    # still synchronous.
    monkeypatch.setenv("DJANGO_ALLOW_ASYNC_UNSAFE", "true")
    with sync_api.sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        page = browser.new_page(viewport={"width": 1280, "height": 900})
        page.set_default_timeout(15_000)
        yield page
        browser.close()
        # The ORM calls made while Playwright ran have connections of their own (its event
        # loop's context): close them, or the test database cannot be dropped at the end.
        connections.close_all()


@pytest.fixture
def write_integration(tmp_path):
    """Write an integration folder: a manifest (dict or text) and extra files."""

    def write(manifest, files=None, folder="integration") -> Path:
        root = tmp_path / folder
        root.mkdir(parents=True, exist_ok=True)
        text = manifest if isinstance(manifest, str) else yaml.safe_dump(manifest, sort_keys=False)
        (root / "service-manifest.yaml").write_text(text)
        for name, content in (files or {}).items():
            path = root / name
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(content if isinstance(content, bytes) else content.encode())
        return root

    return write


#: Descriptors ``descriptors_past_1024`` holds: the next ones opened are numbered past them.
HELD_DESCRIPTORS = 1100


@pytest.fixture
def descriptors_past_1024():
    """This process holds ``HELD_DESCRIPTORS`` more until the test ends, as a server with
    hundreds of workers or connections does: what it opens next is numbered past 1,024,
    beyond ``select``'s reach."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    needed = HELD_DESCRIPTORS + 200
    if hard != resource.RLIM_INFINITY and hard < needed:
        pytest.skip(f"the open files' hard limit is {hard}")
    resource.setrlimit(resource.RLIMIT_NOFILE, (max(soft, needed), hard))
    held = [os.open(os.devnull, os.O_RDONLY) for _ in range(HELD_DESCRIPTORS)]
    yield
    for descriptor in held:
        os.close(descriptor)
    resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))
