"""The integration page's versions for its owners: "Make current" releases an older version
again (a POST form with its CSRF token), says so and re-validates the installations; the
installation page shows which version runs."""

import re

import pytest
from django.test import Client
from django.urls import reverse

from integrations.models import Integration
from integrations.services import integration_publish_folder
from integrations.services.installations import installation_create
from tests.integrations.conftest import minimal_manifest

pytestmark = pytest.mark.django_db

NEEDS_A_KEY = {
    "account": {
        "properties": {"api_key": {"type": "string", "title": "Key", "description": "d"}},
        "required": ["api_key"],
    }
}


@pytest.fixture
def hello(write_integration, org_admin, organization):
    """hello at version 2 (which needs a key), installed in acme, which ran version 1."""
    for description, configurations in (("One.", None), ("Two.", NEEDS_A_KEY)):
        root = write_integration(
            minimal_manifest(description=description, configurations=configurations)
        )
        integration = integration_publish_folder(
            path=root, publisher=org_admin, env={}
        ).version.integration
        if description == "One.":
            installation_create(user=org_admin, integration=integration, organization=organization)
    return Integration.objects.get(name="hello")


def release_url(integration, number: int) -> str:
    return reverse(
        "marketplace:integration-version-release", args=["acme", integration.name, number]
    )


def test_the_owner_makes_an_older_version_current_again(hello, org_admin):
    browser = Client(enforce_csrf_checks=True)
    browser.force_login(org_admin)
    page = browser.get(reverse("marketplace:integration", args=["acme", "hello"]))
    text = page.content.decode()
    form = re.search(
        rf'<form method="post" action="{re.escape(release_url(hello, 1))}"[^>]*>(.*?)</form>',
        text,
        re.S,
    )
    assert form is not None and "Make current" in form[1]
    assert release_url(hello, 2) not in text  # the current one offers nothing
    assert browser.post(release_url(hello, 1)).status_code == 403  # without its CSRF token

    token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', form[1])[1]
    answer = browser.post(release_url(hello, 1), {"csrfmiddlewaretoken": token}, follow=True)
    assert answer.status_code == 200
    said = [str(message) for message in answer.context["messages"]]
    assert said == [
        "Version 1 is current again: every installation runs it. 1 installation(s) changed "
        "when checked against it."
    ]
    hello.refresh_from_db()
    assert (hello.released_version.number, hello.description) == (1, "One.")
    installation = hello.installations.get()
    assert installation.status == "active"

    shown = browser.get(reverse("marketplace:installation", args=["acme", installation.pk]))
    assert re.search(r'class="running-version">Version 1<', shown.content.decode())


def test_members_see_no_versions_and_may_not_make_one_current(hello, member_client):
    page = member_client.get(reverse("marketplace:integration", args=["acme", "hello"]))
    assert "Make current" not in page.content.decode()
    assert member_client.post(release_url(hello, 1)).status_code == 403
    assert (
        member_client.post(
            reverse("marketplace:integration-version-release", args=["acme", "nothing", 1])
        ).status_code
        == 404
    )
    hello.refresh_from_db()
    assert hello.released_version.number == 2
