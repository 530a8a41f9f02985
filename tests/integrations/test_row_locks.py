"""Writers of an integration or an installation wait for each other, never for a call's log
line (PostgreSQL): a publish, a configuration or a pause goes through while a log line naming
the installation is still being written, where a ``FOR UPDATE`` lock once deadlocked a
publish with such a line."""

import threading

import pytest
from django.db import connection, transaction
from django.utils import timezone

from integrations.models import IntegrationLog
from integrations.services import integration_publish_folder
from integrations.services.installations import (
    installation_configure,
    installation_create,
    installation_pause,
)
from tests.integrations.conftest import minimal_manifest

pytestmark = [
    pytest.mark.skipif(connection.vendor != "postgresql", reason="row locks of PostgreSQL"),
    pytest.mark.django_db(transaction=True),
]

SCRIPT = "from docplatform_sdk import create_integration\nintegration = create_integration()\n"


class OpenLogLine(threading.Thread):
    """A log line of the installation inserted in a transaction that stays open until the
    block ends. Its foreign keys (deferred: checked at the commit) are checked at once, so
    their ``KEY SHARE`` locks on the integration and the installation are held as the log
    writer's batch holds them while it commits."""

    def __init__(self, installation):
        super().__init__(daemon=True)
        self.installation = installation
        self.inserted = threading.Event()
        self.release = threading.Event()
        self.failure = None

    def run(self):
        try:
            with transaction.atomic():
                with connection.cursor() as cursor:
                    cursor.execute("SET CONSTRAINTS ALL IMMEDIATE")
                IntegrationLog.objects.create(
                    time=timezone.now(),
                    kind=IntegrationLog.Kind.FETCH,
                    integration_id=self.installation.integration_id,
                    installation=self.installation,
                    outcome=IntegrationLog.Outcome.OK,
                )
                self.inserted.set()
                self.release.wait(timeout=30)
        except Exception as error:  # reported by finish()
            self.failure = error
            self.inserted.set()
        finally:
            connection.close()

    def __enter__(self):
        self.start()
        assert self.inserted.wait(timeout=10) and self.failure is None
        return self

    def __exit__(self, *exc_info):
        self.release.set()
        self.join(timeout=10)
        assert self.failure is None, self.failure


@pytest.fixture
def lock_wait_is_short():
    """A wait for a row lock fails after 3 s in this test's connection, instead of hanging."""
    with connection.cursor() as cursor:
        cursor.execute("SET lock_timeout = '3s'")
    yield
    with connection.cursor() as cursor:
        cursor.execute("RESET lock_timeout")


@pytest.fixture
def published(write_integration, org_admin):
    def publish(label: str):
        manifest = minimal_manifest(name="locked", script="main.py", description=label)
        root = write_integration(manifest, files={"main.py": SCRIPT})
        return integration_publish_folder(path=root, publisher=org_admin).version.integration

    return publish


@pytest.fixture
def installed(published, organization, org_admin):
    integration = published("first")
    return installation_create(user=org_admin, integration=integration, organization=organization)


def test_a_publish_goes_through_while_a_log_line_is_open(published, installed, lock_wait_is_short):
    with OpenLogLine(installed):
        integration = published("second")  # locks the integration, then revalidates
    assert integration.latest_version.number == 2
    assert IntegrationLog.objects.filter(installation=installed, kind="fetch").count() == 1


@pytest.mark.parametrize(
    "change",
    [
        lambda installation, user: installation_configure(
            user=user, installation=installation, external_ids=["ticket-1"]
        ),
        lambda installation, user: installation_pause(user=user, installation=installation),
    ],
    ids=["configure", "pause"],
)
def test_an_installations_change_goes_through_while_a_log_line_is_open(
    installed, org_admin, lock_wait_is_short, change
):
    with OpenLogLine(installed):
        change(installed, org_admin)
    assert IntegrationLog.objects.filter(installation=installed, kind="fetch").count() == 1
