"""An integration without code (and without an app that sends its events, as the webhook
integration has) does nothing once installed: its pages say so rather than show it active
and silent."""

import pytest
from django.urls import reverse

from integrations.models import Integration
from integrations.services.installations import installation_create

pytestmark = pytest.mark.django_db

NO_CODE = "This integration runs no code."


def test_the_pages_of_an_integration_without_code_say_it_does_nothing(
    admin_client, org_admin, organization, notifier
):
    assert not notifier.latest_version.script_path
    page = admin_client.get(
        reverse("marketplace:integration", args=["acme", notifier.name])
    ).content.decode()
    assert NO_CODE in page
    installation = installation_create(
        user=org_admin, integration=notifier, organization=organization
    )
    page = admin_client.get(
        reverse("marketplace:installation", args=["acme", installation.pk])
    ).content.decode()
    assert NO_CODE in page


def test_the_webhook_integration_has_no_script_and_still_acts(member_client):
    webhook = Integration.objects.get(name="webhook")
    assert not webhook.latest_version.script_path
    page = member_client.get(
        reverse("marketplace:integration", args=["acme", webhook.name])
    ).content.decode()
    assert NO_CODE not in page
