"""The platform side of the runtime: events dispatched by a real worker to a real runtime
host, public endpoints relayed, the integration calling back the platform API."""

import textwrap

import pytest
import requests

from docplatform.events.models import Delivery
from docplatform.revisions import space_content_update
from integrations.operators import OPERATOR
from integrations.services.installations import installation_create, installation_pause
from tests.conftest import wait_until
from tests.factories import SpaceFactory

pytestmark = pytest.mark.usefixtures("celery_worker")

SCRIPT = textwrap.dedent(
    """
    from docplatform_sdk import Response, create_integration

    async def on_content_updated(event, context):
        # Call the platform back with the installation's token.
        context.api.update_installation(external_ids=["rev:" + event["revisionId"]])

    def fetch(request, context):
        if request.route == "/boom":
            raise RuntimeError("kaboom")
        if request.route == "/slow":
            while True:
                pass
        body = {
            "method": request.method,
            "route": request.route,
            "query": request.query,
            "body": request.body.decode("latin-1"),
            "installation": context.environment.installation.id,
            "header": request.headers.get("x-demo"),
        }
        return Response.json(body, status=201, headers={"X-From": "integration"})

    integration = create_integration(
        fetch=fetch, events={"space_content_updated": on_content_updated}
    )
    """
)


@pytest.fixture
def scripted(publish, org_admin, write_integration, organization):
    from integrations.services import integration_publish_folder
    from tests.integrations.conftest import minimal_manifest

    root = write_integration(
        minimal_manifest(name="echo", script="main.py", scopes=["space:content:read"]),
        files={"main.py": SCRIPT},
        folder="echo",
    )
    return integration_publish_folder(path=root, publisher=org_admin).version.integration


@pytest.fixture
def installed(scripted, org_admin, organization):
    space = SpaceFactory(organization=organization)
    installation = installation_create(
        user=org_admin, integration=scripted, organization=organization, space=space
    )
    return installation, space


def endpoint(installation):
    from integrations.environment import installation_public_endpoint

    return installation_public_endpoint(installation)


def test_an_event_runs_the_handler_which_calls_the_platform_back(runtime, installed):
    installation, space = installed
    revision = space_content_update(space=space, pages=[{"path": "p", "title": "P"}])
    delivery = Delivery.objects.get(event__type="space_content_updated")
    wait_until(lambda: Delivery.objects.get(pk=delivery.pk).status != "pending", timeout=30)
    delivery.refresh_from_db()
    assert (delivery.status, delivery.outcome) == ("succeeded", "handled"), delivery.last_error
    assert delivery.duration_ms is not None
    installation.refresh_from_db()
    assert installation.external_ids == [f"rev:{revision.id}"]
    # Setup events with no handler are answered as such.
    setup = Delivery.objects.filter(
        installation=installation, event__type="space_installation_setup"
    )
    wait_until(lambda: setup.get().status == "succeeded")
    assert setup.get().outcome == "the integration has no handler for this event"


def test_the_public_endpoint_relays_method_path_query_headers_and_raw_body(runtime, installed):
    installation, _ = installed
    response = requests.put(
        endpoint(installation) + "/items/7?colour=blue",
        data=b"\xff\x00raw",
        headers={"X-Demo": "yes"},
        timeout=20,
    )
    assert response.status_code == 201
    assert response.headers["X-From"] == "integration"
    assert response.json() == {
        "method": "PUT",
        "route": "/items/7",
        "query": {"colour": "blue"},
        "body": "\xff\x00raw",
        "installation": installation.parent.id,
        "header": "yes",
    }


@pytest.mark.slow
def test_integration_failures_get_clear_errors(runtime, installed):
    installation, _ = installed
    boom = requests.get(endpoint(installation) + "/boom", timeout=20)
    assert boom.status_code == 502
    assert boom.json() == {
        "error": "integration_error",
        "message": "the integration raised an error",
    }
    assert "Traceback" not in boom.text
    slow = requests.get(endpoint(installation) + "/slow", timeout=20)
    assert slow.status_code == 504 and slow.json()["error"] == "timeout"
    assert requests.get(endpoint(installation) + "/", timeout=20).status_code == 201


def test_unknown_or_paused_installations_and_big_bodies(runtime, installed, settings):
    installation, _ = installed
    assert requests.get(endpoint(installation)[:-4] + "zzzz", timeout=10).status_code == 404
    settings.PUBLIC_ENDPOINT_MAX_BODY = 100
    too_big = requests.post(endpoint(installation), data=b"x" * 101, timeout=10)
    assert too_big.status_code == 413 and too_big.json()["error"] == "body_too_large"
    installation_pause(user=OPERATOR, installation=installation)
    paused = requests.get(endpoint(installation), timeout=10)
    assert paused.status_code == 503 and paused.json()["error"] == "installation_paused"


def test_a_runtime_that_cannot_be_reached(installed, settings, origins):
    installation, _ = installed
    settings.RUNTIME_URL = "http://127.0.0.1:9"
    response = requests.get(endpoint(installation), timeout=10)
    assert response.status_code == 502
    assert response.json()["error"] == "runtime_unavailable"
