"""The installation page's Connect link for each ``button`` property (the flow itself is in
test_oauth_flow.py): it opens the installation's public endpoint at the ``callback_url``."""

import pytest
from django.urls import reverse

from integrations.environment import installation_public_endpoint
from integrations.models import Integration
from integrations.services.installations import installation_configure, installation_create
from tests.factories import IntegrationFactory

pytestmark = pytest.mark.django_db

BUTTON = {
    "type": "button",
    "title": "Tracker account",
    "description": "Whose projects are offered.",
    "button_text": "Connect the tracker",
    "callback_url": "/connect/start",
}


@pytest.fixture
def installation(organization, org_member):
    integration = IntegrationFactory(
        name="tracker",
        organization=organization,
        visibility=Integration.Visibility.PRIVATE,
        configurations={"account": {"properties": {"tracker": BUTTON}, "required": ["tracker"]}},
    )
    return installation_create(user=org_member, integration=integration, organization=organization)


def test_the_page_links_to_the_callback_url_and_never_shows_the_token(
    client, org_member, installation
):
    client.force_login(org_member)
    url = reverse("marketplace:installation", args=["acme", installation.pk])
    link = installation_public_endpoint(installation) + "/connect/start"
    content = client.get(url).content.decode()
    assert "Not connected" in content
    assert f'href="{link}" target="_blank" rel="noopener">Connect the tracker</a>' in content

    installation_configure(
        installation=installation, changes={"tracker": {"access_token": "tok-secret-123"}}
    )
    content = client.get(url).content.decode()
    assert "Connected" in content and "Not connected" not in content
    assert f'href="{link}" target="_blank" rel="noopener">Reconnect</a>' in content
    assert "tok-secret-123" not in content
