"""Integration code posts support conversations with its installation token, through the real
platform (live server, runtime host): a help desk's webhook reaches the installation's public
endpoint, the code posts the thread with ``context.api``, and the organization's admins see it
beside the page that answers it. Code whose installation lacks ``conversations:ingest`` is
refused (403)."""

import pytest
import requests

from docplatform.conversations.models import Conversation
from docplatform.revisions import space_content_update
from integrations.environment import installation_public_endpoint
from integrations.services import integration_publish_folder
from integrations.services.installations import installation_create
from tests.factories import SpaceFactory
from tests.integrations.conftest import minimal_manifest

SCRIPT = """
from docplatform_sdk import Response, create_integration
from docplatform_sdk.context import PlatformAPIError


def fetch(request, context):
    ticket = request.json()
    organization = context.api.installation()["organization"]
    try:
        posted = context.api.post(f"orgs/{organization}/conversations/", json=ticket)
    except PlatformAPIError as error:
        return Response.json({"refused": error.status, "body": error.body})
    return Response.json({"id": posted["id"], "messages": len(posted["messages"])})


integration = create_integration(fetch=fetch)
"""
TICKET = {
    "externalId": "zd-1",
    "subject": "Rotating the webhook signing secret",
    "messages": [
        {
            "role": "user",
            "text": "How do I rotate our webhook secret?",
            "time": "2026-03-01T09:00:00Z",
        }
    ],
}


def installed(write_integration, org_admin, organization, *, name, scopes):
    manifest = minimal_manifest(name=name, title=name.title(), script="main.py", scopes=scopes)
    root = write_integration(manifest, files={"main.py": SCRIPT}, folder=name)
    integration = integration_publish_folder(path=root, publisher=org_admin).version.integration
    return installation_create(user=org_admin, integration=integration, organization=organization)


@pytest.mark.slow
@pytest.mark.django_db(transaction=True)
def test_code_with_the_scope_posts_a_conversation_admins_see(
    runtime, write_integration, org_admin, organization, client
):
    space = SpaceFactory(organization=organization, title="Guide")
    page = {"path": "secrets", "title": "Webhook secrets", "body": "Rotate the signing secret."}
    space_content_update(space=space, pages=[page])
    desk = installed(
        write_integration, org_admin, organization, name="desk", scopes=["conversations:ingest"]
    )
    endpoint = installation_public_endpoint(desk) + "/"
    first = requests.post(endpoint, json=TICKET, timeout=30)
    assert first.status_code == 200, first.text
    grown = {
        **TICKET,
        "messages": [
            *TICKET["messages"],
            {**TICKET["messages"][0], "text": "Any news?", "time": "2026-03-01T10:00:00Z"},
        ],
    }
    again = requests.post(endpoint, json=grown, timeout=30).json()
    assert again == {"id": first.json()["id"], "messages": 2}
    assert Conversation.objects.get().installation_id == desk.pk

    client.force_login(org_admin)
    html = client.get("/orgs/acme/conversations/").content.decode()
    assert "Rotating the webhook signing secret" in html
    assert f'href="/s/{space.pk}/secrets"' in html
    assert "Not answered by the documentation yet" not in html


@pytest.mark.django_db(transaction=True)
def test_code_without_the_scope_is_refused(runtime, write_integration, org_admin, organization):
    reader = installed(
        write_integration, org_admin, organization, name="reader", scopes=["space:content:read"]
    )
    answer = requests.post(installation_public_endpoint(reader) + "/", json=TICKET, timeout=30)
    assert answer.status_code == 200, answer.text
    assert answer.json()["refused"] == 403
    assert "conversations:ingest" in answer.json()["body"]["errors"][0]["detail"]
    assert not Conversation.objects.exists()
