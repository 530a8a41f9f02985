"""``completion_url`` options: asked of a real runtime host running the integration's code,
validated strictly, served by the API and shown as dropdowns on the installation page."""

import textwrap

import pytest
from django.urls import reverse

from integrations.models import Installation
from integrations.operators import OPERATOR
from integrations.services import integration_publish_folder
from integrations.services.installations import installation_create, installation_pause
from tests.api_helpers import API, NOT_FOUND, api_client
from tests.integrations.conftest import minimal_manifest

pytestmark = pytest.mark.django_db

SCRIPT = textwrap.dedent(
    """
    from docplatform_sdk import Response, create_integration

    ANSWERS = {
        "/regions": [{"value": "eu-1", "label": "Europe 1"}, {"value": "us-1", "label": "US 1"}],
        "/not-a-list": {"value": "eu-1", "label": "Europe 1"},
        "/other-keys": [{"id": "eu-1", "name": "Europe 1"}],
        "/number-value": [{"value": 1, "label": "One"}],
        "/empty-label": [{"value": "eu-1", "label": " "}],
        "/twice": [{"value": "a", "label": "A"}, {"value": "a", "label": "B"}],
        "/too-many": [{"value": str(n), "label": str(n)} for n in range(1001)],
        "/too-long": [{"value": "x" * 501, "label": "X"}],
    }

    def fetch(request, context):
        if request.route == "/boom":
            raise RuntimeError("kaboom")
        if request.route == "/not-json":
            return Response.html("<p>options</p>")
        if request.route == "/refused":
            return Response.json({"error": "no", "message": "connect an account first"}, 409)
        if request.route == "/echo":
            installation = context.environment.installation.id
            return Response.json([{"value": request.method, "label": installation}])
        return Response.json(ANSWERS[request.route])

    integration = create_integration(fetch=fetch)
    """
)

#: Property name -> completion_url; each answers as its name says.
COMPLETED = {
    "region": "/regions",
    "echo": "/echo",
    "boom": "/boom",
    "not_json": "/not-json",
    "refused": "/refused",
    "not_a_list": "/not-a-list",
    "other_keys": "/other-keys",
    "number_value": "/number-value",
    "empty_label": "/empty-label",
    "twice": "/twice",
    "too_many": "/too-many",
    "too_long": "/too-long",
}
FAILURES = {
    "boom": "the integration raised an error",
    "not_json": "the integration's answer on /not-json is invalid: the answer is not JSON",
    "refused": "the integration answered HTTP 409 on /refused: connect an account first",
    "not_a_list": 'is invalid: the answer is not a JSON list of {"value", "label"} objects',
    "other_keys": 'option 0 is not an object with exactly "value" and "label"',
    "number_value": "option 0: value must be a non-empty string",
    "empty_label": "option 0: label must be a non-empty string",
    "twice": "option 1: the value 'a' is listed twice",
    "too_many": "the answer lists 1001 options; at most 1000",
    "too_long": "option 0: value is longer than 500 characters",
}


def configurations(properties: dict) -> dict:
    completed = {
        name: {"type": "string", "title": name, "description": ".", "completion_url": path}
        for name, path in properties.items()
    }
    plain = {"type": "string", "title": "Plain", "description": "Typed in."}
    return {"account": {"properties": {**completed, "plain": plain}}}


@pytest.fixture
def completing_runtime(runtime_host, settings):
    """Envelopes go to the real runtime host; nothing here calls the platform back."""
    settings.RUNTIME_URL = runtime_host.frames_url
    return runtime_host


@pytest.fixture
def publish_completing(org_admin, write_integration):
    def publish(properties):
        manifest = minimal_manifest(
            name="completer", script="main.py", configurations=configurations(properties)
        )
        root = write_integration(manifest, files={"main.py": SCRIPT}, folder="completer")
        return integration_publish_folder(path=root, publisher=org_admin).version.integration

    return publish


@pytest.fixture
def installation(publish_completing, org_admin, organization) -> Installation:
    integration = publish_completing(COMPLETED)
    return installation_create(user=org_admin, integration=integration, organization=organization)


def options_url(installation, name: str) -> str:
    return f"{API}/installations/{installation.pk}/configuration/{name}/options/"


def test_the_options_come_from_the_integration(completing_runtime, installation, org_admin):
    response = api_client(org_admin).get(options_url(installation, "region"))
    assert response.status_code == 200, response.content
    assert response.json() == {
        "options": [{"value": "eu-1", "label": "Europe 1"}, {"value": "us-1", "label": "US 1"}]
    }
    # A GET of {publicEndpoint}{completion_url}, in the installation's environment.
    echo = api_client(org_admin).get(options_url(installation, "echo"))
    assert echo.json() == {"options": [{"value": "GET", "label": installation.pk}]}


@pytest.mark.parametrize("name", sorted(FAILURES))
def test_a_failing_integration_or_a_bad_answer_is_a_clear_502(
    completing_runtime, installation, org_admin, name
):
    response = api_client(org_admin).get(options_url(installation, name))
    assert response.status_code == 502
    body = response.json()
    assert body["type"] == "server_error"
    [error] = body["errors"]
    assert error["code"] == ("integration_error" if name == "boom" else "invalid_answer")
    assert FAILURES[name] in error["detail"]
    assert "Traceback" not in response.content.decode()


def test_a_runtime_that_cannot_be_reached_is_a_502(installation, org_admin, settings):
    settings.RUNTIME_URL = "http://127.0.0.1:9"
    response = api_client(org_admin).get(options_url(installation, "region"))
    assert response.status_code == 502
    assert response.json()["errors"][0]["code"] == "runtime_unavailable"
    assert "cannot be reached" in response.json()["errors"][0]["detail"]


def test_a_paused_installation_is_not_asked(installation, org_admin):
    installation_pause(user=OPERATOR, installation=installation)
    response = api_client(org_admin).get(options_url(installation, "region"))
    assert response.status_code == 503  # the gateway's one status for a paused installation
    assert response.json()["errors"][0]["code"] == "installation_paused"
    assert response.json()["errors"][0]["detail"] == "the installation is paused"


def test_a_property_without_completion_url_is_a_400(installation, org_admin):
    response = api_client(org_admin).get(options_url(installation, "plain"))
    assert response.status_code == 400
    [error] = response.json()["errors"]
    assert error["attr"] == "property"
    assert "has no completion_url" in error["detail"]


def test_only_members_of_the_installing_organization_see_options(installation, org_admin, outsider):
    assert api_client(outsider).get(options_url(installation, "region")).json() == NOT_FOUND
    unknown_property = api_client(org_admin).get(options_url(installation, "nope"))
    assert unknown_property.status_code == 404
    unknown_installation = api_client(org_admin).get(
        f"{API}/installations/zzzzzzzzzzzz/configuration/region/options/"
    )
    assert unknown_installation.status_code == 404
    assert api_client().get(options_url(installation, "region")).status_code in (401, 403)


# --- The configuration form -----------------------------------------------------------------


def page_url(installation) -> str:
    return reverse("marketplace:installation", args=["acme", installation.pk])


@pytest.fixture
def page_installation(publish_completing, org_admin, organization) -> Installation:
    integration = publish_completing({"region": "/regions", "boom": "/boom"})
    return installation_create(user=org_admin, integration=integration, organization=organization)


def test_the_form_shows_the_options_as_a_dropdown(
    completing_runtime, page_installation, client, org_admin
):
    client.force_login(org_admin)
    content = client.get(page_url(page_installation)).content.decode()
    assert '<select name="configuration-region"' in content
    assert '<option value="eu-1">Europe 1</option>' in content
    assert '<option value="us-1">US 1</option>' in content
    # Options that cannot be had: a text input, and the reason.
    assert 'type="text" name="configuration-boom"' in content
    assert (
        "The options could not be loaded from the integration (the integration raised an "
        "error); type the value instead." in content
    )

    response = client.post(page_url(page_installation), {"configuration-region": "us-1"})
    assert response.status_code == 302
    page_installation.refresh_from_db()
    assert page_installation.configuration == {"region": "us-1"}


def test_a_value_no_longer_offered_stays_selected(
    completing_runtime, page_installation, client, org_admin
):
    page_installation.configuration = {"region": "ap-1"}
    page_installation.save()
    client.force_login(org_admin)
    content = client.get(page_url(page_installation)).content.decode()
    assert '<option value="ap-1" selected>ap-1 (no longer offered)</option>' in content


def test_without_a_runtime_the_form_falls_back_to_text_inputs(
    page_installation, client, org_admin, settings
):
    settings.RUNTIME_URL = "http://127.0.0.1:9"
    client.force_login(org_admin)
    response = client.get(page_url(page_installation))
    assert response.status_code == 200
    content = response.content.decode()
    assert 'type="text" name="configuration-region"' in content
    assert "the runtime host cannot be reached" in content
