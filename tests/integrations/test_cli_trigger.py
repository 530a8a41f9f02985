"""``docplatform-integration trigger`` as an author runs it (the console script in its own
process, a live server): which installation it picks (the space's, else the organization's
with the event in that space), and each refusal with its exit code and reason. The event
handled end to end, with the worker and the runtime host, is in ``test_cli_dev.py``."""

import pytest

from docplatform.events.models import Delivery
from docplatform.services import api_token_create
from integrations.services.installations import installation_create
from tests.factories import SpaceFactory
from tests.integrations.cli_support import Author

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def author(tmp_path, live_server, org_admin):
    author = Author(tmp_path / "home")
    token = api_token_create(user=org_admin, name="laptop")[1]
    done = author.run("login", "--api", live_server.url + "/api/v1", "--token", token)
    assert done.returncode == 0, done.stderr
    return author


@pytest.fixture
def hello(publish, org_admin):
    return publish(org_admin, name="hello", scopes=["space:content:read"])


def test_trigger_picks_the_installation_and_says_why_it_refuses(
    author, hello, org_admin, organization
):
    space = SpaceFactory(organization=organization)
    missing = author.run("trigger", "space_content_updated", "--name", "hello")
    assert missing.returncode == 1
    assert missing.stderr == (
        "error: hello is not installed in acme: install it (or run dev) first\n"
    )

    installation = installation_create(user=org_admin, integration=hello, organization=organization)
    sent = author.run(
        "trigger", "space_content_updated", "--name", "hello", "--space", space.pk, "--wait", "0"
    )
    delivery = Delivery.objects.get(event__type="space_content_updated")
    assert (delivery.installation_id, delivery.event.space_id) == (installation.pk, space.pk)
    assert sent.stdout == (
        f"sent space_content_updated to installation {installation.pk}: delivery "
        f"{delivery.pk}, eventId {delivery.event_uuid}\n"
    )
    assert sent.returncode == 1  # nothing settles it here: no worker runs
    assert sent.stderr == (
        f"error: delivery {delivery.pk} is still pending after 0 s; follow it with: "
        "docplatform-integration tail hello\n"
    )

    refused = author.run("trigger", "space_view", "--name", "hello")
    assert refused.returncode == 1
    assert refused.stdout.startswith("type: space_view needs the scope space:metadata:read")
    assert refused.stderr == "error: trigger was refused (400)\n"

    usage = author.run("trigger", "space_view", "--name", "hello", "--wait", "soon")
    assert usage.returncode == 2
    assert "'soon' is not a number of seconds (0 to 3600)" in usage.stderr
    assert Delivery.objects.filter(event__type__startswith="space_").count() == 1
