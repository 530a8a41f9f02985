"""A sample event fired by ``docplatform-integration trigger`` (the console script in its own
process, a live server, a Celery worker and the real runtime host) is a test everywhere: the
integration's code gets ``"test": true``, the events API says ``test: true`` (a real event
``false``), and the logs show it as a test: the Logs page's badge, the logs API's ``test``, and
``tail``'s ``(test)``."""

import re

import pytest
from django.test import Client

from docplatform.revisions import space_content_update
from docplatform.services import api_token_create
from integrations.models import IntegrationLog
from integrations.services.installations import installation_create
from tests.api_helpers import API, api_client
from tests.conftest import wait_until
from tests.factories import SpaceFactory
from tests.integrations.cli_support import Author

pytestmark = [pytest.mark.slow, pytest.mark.usefixtures("celery_worker")]

SCRIPT = """
from docplatform_sdk import create_integration


def on_content_updated(event, context):
    print("test flag:", event.get("test", "absent"))


integration = create_integration(events={"space_content_updated": on_content_updated})
"""


def test_a_triggered_event_is_a_test_in_the_events_api_and_the_logs(
    tmp_path, runtime, live_server, write_integration, org_admin, organization
):
    from integrations.services import integration_publish_folder
    from tests.integrations.conftest import minimal_manifest

    root = write_integration(
        minimal_manifest(name="flagged", script="main.py"), {"main.py": SCRIPT}, folder="flagged"
    )
    integration = integration_publish_folder(path=root, publisher=org_admin).version.integration
    space = SpaceFactory(organization=organization)
    installation = installation_create(
        user=org_admin, integration=integration, organization=organization, space=space
    )
    author = Author(tmp_path / "home")
    token = api_token_create(user=org_admin, name="laptop")[1]
    assert (
        author.run("login", "--api", f"{live_server.url}/api/v1", "--token", token).returncode == 0
    )

    sent = author.run("trigger", "space_content_updated", "--name", "flagged", "--space", space.pk)
    assert sent.returncode == 0, sent.stdout + sent.stderr
    assert re.search(r"delivery \d+ succeeded", sent.stdout), sent.stdout
    space_content_update(space=space, pages=[{"path": "p", "title": "P"}])  # a real event
    lines = IntegrationLog.objects.filter(
        installation=installation, kind="event", event="space_content_updated"
    )
    wait_until(lambda: lines.count() == 2)

    # The code got the flag on the sample event only.
    by_test = {line.test: line.output for line in lines}
    assert by_test == {True: "test flag: True\n", False: "test flag: absent\n"}

    # The events API.
    events = api_client(org_admin).get(f"{API}/orgs/{organization.pk}/events/").json()
    events = events["results"] if isinstance(events, dict) else events
    flags = sorted(event["test"] for event in events if event["type"] == "space_content_updated")
    assert flags == [False, True]

    # The logs: the API, the Logs page, tail.
    logged = api_client(org_admin).get(f"{API}/installations/{installation.pk}/logs/").json()
    updates = [item for item in logged["items"] if item["event"] == "space_content_updated"]
    assert sorted(item["test"] for item in updates) == [False, True]
    browser = Client()
    browser.force_login(org_admin)
    page = browser.get(
        f"/marketplace/orgs/acme/installations/{installation.pk}/logs/"
    ).content.decode()
    articles = page.split('<article class="log-line')[1:]
    badges = ['class="badge test-event"' in article for article in articles]
    outputs = ["test flag: True" in article for article in articles]
    assert badges == outputs and badges.count(True) == 1
    tail = author.run("tail", "flagged", "--no-follow", "--kind", "event")
    assert tail.returncode == 0, tail.stderr
    heads = [line for line in tail.stdout.splitlines() if " event space_content_updated" in line]
    assert sorted("(test)" in head for head in heads) == [False, True], tail.stdout
