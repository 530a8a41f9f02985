"""The operators' admin: the delivery log with its attempts, redelivery and test pings, and
the read-mostly installation admin. No secret or token is ever shown."""

import pytest
from django.contrib.auth import get_user_model
from django.utils import timezone

from docplatform.events.leases import Result, delivery_claim, delivery_settle
from docplatform.events.models import Delivery
from docplatform.revisions import space_content_update
from integrations.models import Installation
from integrations.operators import OPERATOR
from integrations.services.installations import (
    installation_create,
    installation_pause,
)
from tests.conftest import wait_until
from tests.factories import IntegrationFactory, OrganizationFactory
from tests.integrations.connecting import connect
from webhooks.models import DeliveryAttempt
from webhooks.services.ping import webhook_ping_send
from webhooks.services.signing_secrets import signing_secret_current

pytestmark = pytest.mark.usefixtures("webhook_settings")

DELIVERIES = "/admin/docplatform/delivery/"
ATTEMPTS = "/admin/webhooks/deliveryattempt/"
INSTALLATIONS = "/admin/integrations/installation/"
CONNECTED_TOOL = {
    "account": {
        "properties": {
            "channel": {"type": "string", "title": "Channel", "description": "d"},
            "slack": {
                "type": "button",
                "title": "Slack",
                "description": "d",
                "button_text": "Connect",
                "callback_url": "/oauth",
            },
        }
    }
}


@pytest.fixture
def operator_client(client, db):
    operator = get_user_model().objects.create_superuser("operator", password="x")
    client.force_login(operator)
    return client


@pytest.fixture
def hook(install_webhook, space, receiver):
    return install_webhook(space=space, url=receiver.url)


def listed(response) -> list[int]:
    return sorted(delivery.pk for delivery in response.context["cl"].result_list)


def run_action(client, url, action, rows):
    data = {"action": action, "_selected_action": [row.pk for row in rows]}
    return client.post(url, data, follow=True)


def messages_of(response) -> list[str]:
    return [str(message) for message in response.context["messages"]]


@pytest.mark.slow
def test_the_delivery_log_filters_and_searches(operator_client, hook, space):
    ping = webhook_ping_send(user=OPERATOR, installation=hook)
    failed = delivery_claim(webhook_ping_send(user=OPERATOR, installation=hook).pk)
    delivery_settle(failed, Result.failed(error="", outcome="HTTP 404"))
    space_content_update(space=space, pages=[{"path": "p", "title": "P", "body": "b"}])
    update = Delivery.objects.get(event__type="space_content_updated")
    elsewhere = OrganizationFactory(subdomain="globex")

    response = operator_client.get(DELIVERIES)
    assert response.status_code == 200
    assert listed(response) == sorted([ping.pk, failed.pk, update.pk])
    content = response.content.decode()
    for filter_title in ("By status", "By type", "By organization"):
        assert filter_title in content

    for query, expected in [
        ("status__exact=failed", [failed.pk]),
        ("status__exact=pending", sorted([ping.pk, update.pk])),
        ("event__type=ping", sorted([ping.pk, failed.pk])),
        ("event__type=space_content_updated", [update.pk]),
        (f"installation__organization__id__exact={hook.organization_id}", listed(response)),
        (f"installation__organization__id__exact={elsewhere.pk}", []),
        (f"q={ping.event_uuid}", [ping.pk]),
        (f"q={hook.pk}", listed(response)),
        ("q=not-an-event-id", []),
    ]:
        assert listed(operator_client.get(f"{DELIVERIES}?{query}")) == expected, query


@pytest.mark.usefixtures("celery_worker")
def test_a_delivery_page_shows_its_attempts_and_no_secret(operator_client, hook, receiver):
    receiver.respond((500, {"X-Trace": "t-1"}, b"busy"), 200)
    delivery = webhook_ping_send(user=OPERATOR, installation=hook)
    receiver.wait_for(2)
    wait_until(lambda: Delivery.objects.get(pk=delivery.pk).status == "succeeded")

    response = operator_client.get(f"{DELIVERIES}{delivery.pk}/change/")
    assert response.status_code == 200
    content = response.content.decode()
    assert str(delivery.event_uuid) in content
    attempts = response.context["inline_admin_formsets"][0].formset.queryset
    assert [(a.chain, a.number, a.status_code) for a in attempts] == [(1, 1, 500), (1, 2, 200)]
    assert signing_secret_current(hook) not in content
    assert hook.api_token not in content
    assert "Delete" not in content and 'name="_save"' not in content

    # The first attempt's response in full on its own page, headers one per line.
    first = attempts[0]
    assert f"{ATTEMPTS}{first.pk}/change/" in content
    page = operator_client.get(f"{ATTEMPTS}{first.pk}/change/").content.decode()
    assert "X-Trace: t-1" in page and "busy" in page
    assert signing_secret_current(hook) not in page


def test_the_attempt_table_stays_within_the_page_and_delays_show_to_a_tenth(operator_client, hook):
    delivery = webhook_ping_send(user=OPERATOR, installation=hook)
    long_url = "https://hooks.example.com/" + "a" * 300
    DeliveryAttempt.objects.create(
        delivery=delivery,
        number=1,
        started_at=timezone.now(),
        duration_ms=12,
        url=long_url,
        error="x" * 400,
        outcome="retry",
        next_delay=1.0123456789012345,
        request_headers={"Content-Type": "application/json", "X-Service-Signature": "t=1,v1=ab"},
    )
    content = operator_client.get(f"{DELIVERIES}{delivery.pk}/change/").content.decode()
    assert "1.0 s" in content and "1.0123" not in content
    assert long_url not in content and "x" * 400 not in content  # cut short in the table
    assert "webhooks/admin.css" in content  # the table's fixed layout
    menu = operator_client.get("/admin/").content.decode()
    assert "Deliveries" in menu and "Deliverys" not in menu

    attempt = DeliveryAttempt.objects.get(delivery=delivery)
    page = operator_client.get(f"{ATTEMPTS}{attempt.pk}/change/").content.decode()
    assert long_url in page and "x" * 400 in page  # in full on the attempt's page
    assert "Content-Type: application/json\nX-Service-Signature: t=1,v1=ab" in page
    assert "{&#x27;Content-Type&#x27;" not in page  # not a dict dump


@pytest.mark.usefixtures("celery_worker")
def test_the_redeliver_action_sends_again_with_the_same_event_id(operator_client, hook, receiver):
    delivery = webhook_ping_send(user=OPERATOR, installation=hook)
    (first,) = receiver.wait_for(1)
    wait_until(lambda: Delivery.objects.get(pk=delivery.pk).status == "succeeded")

    response = run_action(operator_client, DELIVERIES, "redeliver", [delivery])
    assert f"{delivery.pk}: queued again." in messages_of(response)
    _, second = receiver.wait_for(2)
    assert second.headers["X-Service-Delivery"] == first.headers["X-Service-Delivery"]
    wait_until(lambda: Delivery.objects.get(pk=delivery.pk).status == "succeeded")
    assert Delivery.objects.get(pk=delivery.pk).chain == 2


def test_a_delivery_in_progress_is_not_redelivered(operator_client, hook):
    delivery = webhook_ping_send(user=OPERATOR, installation=hook)  # pending: no worker runs here
    response = run_action(operator_client, DELIVERIES, "redeliver", [delivery])
    assert f"{delivery.pk}: the delivery is still in progress" in messages_of(response)
    assert Delivery.objects.get(pk=delivery.pk).chain == 1


def test_the_ping_action_pings_each_installation_once(operator_client, hook, install_webhook, site):
    other = install_webhook(site=site, url=hook.configuration["url"], page_feedback=True)
    rows = [webhook_ping_send(user=OPERATOR, installation=hook) for _ in range(2)]
    rows.append(webhook_ping_send(user=OPERATOR, installation=other))
    installation_pause(user=OPERATOR, installation=other)

    response = run_action(operator_client, DELIVERIES, "send_test_ping", rows)
    messages = messages_of(response)
    assert any("ping queued" in text and str(hook) in text for text in messages)
    assert any("paused" in text and str(other) in text for text in messages)
    assert Delivery.objects.filter(installation=hook, event__type="ping").count() == 3
    assert Delivery.objects.filter(installation=other, event__type="ping").count() == 1


@pytest.mark.slow
def test_the_installation_admin_is_read_mostly_and_shows_no_credentials(
    operator_client, hook, org_admin, organization
):
    tool = IntegrationFactory(name="tool", organization=organization, configurations=CONNECTED_TOOL)
    connected = installation_create(
        user=org_admin,
        integration=tool,
        organization=organization,
        configuration={"channel": "#docs"},
    )
    connect(
        connected,
        member=org_admin,
        property_name="slack",
        credentials={"access_token": "xoxb-never-shown"},
    )
    assert operator_client.get(INSTALLATIONS).status_code == 200
    page = operator_client.get(f"{INSTALLATIONS}{connected.pk}/change/")
    content = page.content.decode()
    assert "#docs" in content and "connected" in content
    assert "xoxb-never-shown" not in content and connected.api_token not in content
    assert "Delete" not in content and 'name="_save"' not in content
    webhook_page = operator_client.get(f"{INSTALLATIONS}{hook.pk}/change/").content.decode()
    assert signing_secret_current(hook) not in webhook_page
    assert hook.api_token not in webhook_page

    filtered = operator_client.get(f"{INSTALLATIONS}?status__exact=active&level__exact=space")
    assert [i.pk for i in filtered.context["cl"].result_list] == [hook.pk]

    response = run_action(operator_client, INSTALLATIONS, "pause", [hook])
    assert "1 paused." in messages_of(response)
    assert Installation.objects.get(pk=hook.pk).status == "paused"
    response = run_action(operator_client, INSTALLATIONS, "resume", [hook])
    assert "Resumed: 1 active." in messages_of(response)
    assert Installation.objects.get(pk=hook.pk).status == "active"
