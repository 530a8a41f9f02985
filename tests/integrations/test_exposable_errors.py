"""Errors in the author's words (issue 13, point 4): code that raises ExposableError shows its
message to the person using the integration; any other exception shows a generic message and
its details stay in the integration's log. Through the real runtime host: the components API,
the marketplace page, a completion and the public endpoint."""

import textwrap

import pytest
import requests
import yaml
from django.urls import reverse
from docplatform_sdk.errors import MESSAGE_LIMIT

from integrations.environment import installation_public_endpoint
from integrations.models import ComponentState
from integrations.services import integration_publish_folder
from integrations.services.installations import installation_create
from tests.api_helpers import API, api_client
from tests.factories import SpaceFactory
from tests.marketplace.test_components import PageForms, page_url, submit

SCRIPT = textwrap.dedent(
    """
    from docplatform_sdk import (
        ExposableError, Response, block, button, create_component, create_integration, text
    )

    HOSTILE = "<script>alert(1)</script>\\n\\tsecond line " + "x" * 1000


    def render(element, context):
        mode = element.props.get("mode")
        if mode == "exposable":
            raise ExposableError("Reconnect Slack: the token has expired")
        if mode == "hostile":
            raise ExposableError(HOSTILE)
        if mode == "secret":
            raise RuntimeError("the database password is hunter2")
        return block(text("Ready."), button("Export", on_press={"action": "export"}))


    def action(element, action, context):
        raise ExposableError("The export is already running; try again in a minute")


    def screen(element, context):
        raise ExposableError("Connect your account <b>first</b>")


    def fetch(request, context):
        if request.route == "/channels":
            raise ExposableError("Connect Slack first, then pick a channel")
        if request.route == "/secret":
            raise RuntimeError("the database password is hunter2")
        raise ExposableError("No report has that number")


    integration = create_integration(
        fetch=fetch,
        components=[
            create_component("report", render=render, action=action),
            create_component("screen", render=screen),
        ],
    )
    """
)
MANIFEST = {
    "name": "reporter",
    "title": "Reporter",
    "description": "Raises errors in its author's words.",
    "organization": "acme",
    "visibility": "public",
    "scopes": [],
    "script": "main.py",
    "blocks": [{"id": "report", "title": "Report", "description": "A report."}],
    "configurations": {
        "account": {"componentId": "screen"},
        "space": {
            "properties": {
                "channel": {
                    "type": "string",
                    "title": "Channel",
                    "description": "Where to post.",
                    "completion_url": "/channels",
                }
            }
        },
    },
}
GENERIC = "the integration raised an error"


@pytest.fixture
def installation(runtime, org_admin, organization, tmp_path):
    (tmp_path / "service-manifest.yaml").write_text(yaml.safe_dump(MANIFEST))
    (tmp_path / "main.py").write_text(SCRIPT)
    integration = integration_publish_folder(path=tmp_path, publisher=org_admin).version.integration
    return installation_create(user=org_admin, integration=integration, organization=organization)


def render(client, installation, component_id, **body):
    url = f"{API}/installations/{installation.pk}/components/{component_id}/render/"
    return client.post(url, {"instance": "one", **body})


def only_error(response) -> dict:
    [error] = response.json()["errors"]
    return error


def test_a_component_shows_the_authors_words_and_nothing_else_of_other_errors(
    installation, org_admin
):
    client = api_client(org_admin)
    said = render(client, installation, "report", props={"mode": "exposable"})
    assert said.status_code == 422
    assert only_error(said) == {
        "code": "exposable",
        "detail": "Reconnect Slack: the token has expired",
        "attr": None,
    }
    secret = render(client, installation, "report", props={"mode": "secret"})
    assert secret.status_code == 502
    assert only_error(secret) == {"code": "integration_error", "detail": GENERIC, "attr": None}
    assert "hunter2" not in secret.content.decode()
    assert not ComponentState.objects.exists()  # nothing stored for a failed render

    working = render(client, installation, "report", props={"mode": "fine"})
    assert working.status_code == 200
    pressed = render(client, installation, "report", action={"action": "export"})
    assert pressed.status_code == 422
    assert only_error(pressed)["detail"] == ("The export is already running; try again in a minute")


def test_an_exposed_message_is_one_line_of_bounded_plain_text(installation, org_admin):
    said = render(api_client(org_admin), installation, "report", props={"mode": "hostile"})
    detail = only_error(said)["detail"]
    assert detail.startswith("<script>alert(1)</script> second line xxx")  # text, one line
    assert "\n" not in detail and "\t" not in detail
    assert len(detail) == MESSAGE_LIMIT and detail.endswith("…")


def test_the_marketplace_page_shows_the_message_escaped(installation, client, org_admin):
    client.force_login(org_admin)
    page = client.get(page_url(installation)).content.decode()
    assert "could not be shown: Connect your account &lt;b&gt;first&lt;/b&gt;." in page, (
        "the configuration screen's ExposableError, escaped"
    )
    assert "<b>first</b>" not in page


@pytest.fixture
def space_installation(installation, org_admin, organization):
    return installation_create(
        user=org_admin,
        integration=installation.integration,
        organization=organization,
        space=SpaceFactory(organization=organization, title="Handbook"),
    )


def test_a_marketplace_action_shows_the_authors_words(space_installation, client, org_admin):
    client.force_login(org_admin)
    insert = reverse("marketplace:block-insert", args=["acme", space_installation.pk, "report"])
    assert client.post(insert).status_code == 302
    page = client.get(page_url(space_installation)).content.decode()
    [form] = [f for f in PageForms(page).forms if any(b["text"] == "Export" for b in f["buttons"])]
    assert submit(client, form, "Export").status_code == 302
    page = client.get(page_url(space_installation)).content.decode()
    assert (
        "The &#x27;export&#x27; action failed: The export is already running; try again in a "
        "minute." in page
    )


def test_a_completion_shows_the_authors_words(space_installation, client, org_admin):
    url = f"{API}/installations/{space_installation.pk}/configuration/channel/options/"
    response = api_client(org_admin).get(url)
    assert response.status_code == 422
    assert only_error(response) == {
        "code": "exposable",
        "detail": "Connect Slack first, then pick a channel",
        "attr": None,
    }
    client.force_login(org_admin)
    page = client.get(page_url(space_installation)).content.decode()
    assert (
        "The options could not be loaded from the integration (Connect Slack first, then pick "
        "a channel)" in page
    )


def test_the_public_endpoint_answers_the_authors_words(installation):
    endpoint = installation_public_endpoint(installation)
    said = requests.get(f"{endpoint}/reports/7", timeout=20)
    assert said.status_code == 422
    assert said.json() == {"error": "exposable", "message": "No report has that number"}
    secret = requests.get(f"{endpoint}/secret", timeout=20)
    assert secret.status_code == 502
    assert secret.json() == {"error": "integration_error", "message": GENERIC}
