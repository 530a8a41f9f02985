"""The webhook panel of an installation page: the signing secret by role, rotating it, the test
ping, and the delivery log with its attempts and the Redeliver button."""

import re

import pytest
from django.test import Client

from docplatform.events.models import Delivery
from integrations.operators import OPERATOR
from integrations.services.installations import installation_create, installation_pause
from tests.conftest import wait_until
from tests.marketplace.conftest import messages_of, url
from webhooks.services.ping import webhook_ping_send
from webhooks.services.signing_secrets import signing_secret_current

pytestmark = pytest.mark.usefixtures("webhook_settings")


def test_admins_reveal_the_secret_and_members_only_learn_it_exists(
    admin_client, member_client, hook
):
    page = admin_client.get(url("installation", hook)).content.decode()
    secret = signing_secret_current(hook)
    assert re.search(r"<details class=\"secret\">\s*<summary>Reveal the signing secret", page)
    assert secret in page
    assert "Rotate secret…" in page and "Send test ping" in page

    page = member_client.get(url("installation", hook)).content.decode()
    assert secret not in page
    assert "Only the organization's admins can see it." in page
    assert "Rotate secret" not in page and "Send test ping" not in page  # admins ping


def test_another_integrations_installation_has_no_webhook_panel(
    admin_client, org_admin, organization, notifier
):
    other = installation_create(user=org_admin, integration=notifier, organization=organization)
    page = admin_client.get(url("installation", other)).content.decode()
    assert "Signing secret" not in page and "Send test ping" not in page
    response = admin_client.post(url("webhook-ping", other), follow=True)
    assert messages_of(response) == [
        "No ping was sent: not a webhook installation in a space or a site."
    ]
    assert admin_client.get(url("webhook-rotate-secret", other)).status_code == 404


def test_rotating_the_secret_asks_first_and_needs_the_csrf_token(org_admin, hook):
    client = Client(enforce_csrf_checks=True)
    client.force_login(org_admin)
    old = signing_secret_current(hook)
    confirmation = client.get(url("webhook-rotate-secret", hook))
    assert confirmation.status_code == 200
    assert "Rotate the signing secret?" in confirmation.content.decode()
    assert client.post(url("webhook-rotate-secret", hook)).status_code == 403  # no token
    assert signing_secret_current(hook) == old

    token = confirmation.context["csrf_token"]
    response = client.post(
        url("webhook-rotate-secret", hook), {"csrfmiddlewaretoken": token}, follow=True
    )
    new = signing_secret_current(hook)
    assert new != old
    assert "A new signing secret is made." in messages_of(response)[0]
    page = response.content.decode()
    assert new in page and old not in page
    assert "The previous secret also signs until" in page


def test_members_cannot_rotate_the_secret(member_client, hook):
    old = signing_secret_current(hook)
    assert member_client.get(url("webhook-rotate-secret", hook)).status_code == 403
    assert member_client.post(url("webhook-rotate-secret", hook)).status_code == 403
    assert signing_secret_current(hook) == old


@pytest.mark.usefixtures("celery_worker")
def test_ping_then_redeliver_from_the_page(admin_client, hook, receiver):
    receiver.respond(503, 200)
    response = admin_client.post(url("webhook-ping", hook), follow=True)
    ping = Delivery.objects.get(installation=hook, event__type="ping")
    assert messages_of(response) == [f"Test ping sent (eventId {ping.event_uuid})."]
    receiver.wait_for(2)
    wait_until(lambda: Delivery.objects.get(pk=ping.pk).status == "succeeded")

    page = admin_client.get(url("installation", hook)).content.decode()
    assert "delivery-succeeded" in page and str(ping.event_uuid) in page
    assert "<summary>2</summary>" in page and "HTTP 503" in page and "HTTP 200" in page
    redeliver = url("delivery-redeliver", hook, ping.pk)
    assert f'action="{redeliver}"' in page

    response = admin_client.post(redeliver, follow=True)
    assert messages_of(response) == [f"Delivery {ping.pk} is on its way again."]
    first, _, third = receiver.wait_for(3)
    assert third.headers["X-Service-Delivery"] == first.headers["X-Service-Delivery"]
    wait_until(lambda: Delivery.objects.get(pk=ping.pk).status == "succeeded")
    assert Delivery.objects.get(pk=ping.pk).chain == 2


def test_a_delivery_in_progress_has_no_redeliver_button(admin_client, hook):
    ping = webhook_ping_send(user=OPERATOR, installation=hook)  # pending: no worker runs here
    page = admin_client.get(url("installation", hook)).content.decode()
    assert "delivery-pending" in page
    assert url("delivery-redeliver", hook, ping.pk) not in page
    response = admin_client.post(url("delivery-redeliver", hook, ping.pk), follow=True)
    assert messages_of(response) == ["Not redelivered: the delivery is still in progress."]
    assert Delivery.objects.get(pk=ping.pk).chain == 1


def test_a_paused_installation_sends_no_ping(admin_client, hook):
    installation_pause(user=OPERATOR, installation=hook)
    response = admin_client.post(url("webhook-ping", hook), follow=True)
    assert messages_of(response) == ["No ping was sent: the installation is paused."]
    assert not Delivery.objects.filter(event__type="ping").exists()


def test_another_organization_reaches_none_of_it(client, globex_member, hook):
    ping = webhook_ping_send(user=OPERATOR, installation=hook)
    client.force_login(globex_member)
    assert client.get(url("installation", hook)).status_code == 404
    assert client.post(url("webhook-ping", hook)).status_code == 404
    assert client.get(url("webhook-rotate-secret", hook)).status_code == 404
    assert client.post(url("delivery-redeliver", hook, ping.pk)).status_code == 404


def test_a_delivery_of_another_installation_is_a_404(admin_client, hook, notifier, org_admin):
    other = installation_create(
        user=org_admin, integration=notifier, organization=hook.organization
    )
    theirs = Delivery.objects.filter(installation=other).first()
    assert admin_client.post(url("delivery-redeliver", hook, theirs.pk)).status_code == 404
