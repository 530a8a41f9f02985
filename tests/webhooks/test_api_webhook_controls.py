"""The webhook controls of the REST API: the delivery log with its attempts, redelivery, the
test ping and the signing secret; who may call them, and deliveries that really run."""

import json
from datetime import timedelta

import pytest
from django.utils import timezone
from docplatform_sdk.receiver import verify_signature

from docplatform import access
from docplatform.access import Action
from docplatform.events.leases import Result, delivery_claim, delivery_settle
from docplatform.events.models import Delivery
from integrations.models import Installation
from integrations.operators import OPERATOR
from integrations.services.installations import installation_create, installation_pause
from tests.api_helpers import API, NOT_FOUND, api_client, error_attrs
from tests.conftest import wait_until
from tests.factories import IntegrationFactory, MembershipFactory, OrganizationFactory
from webhooks.services.ping import webhook_ping_send
from webhooks.services.signing_secrets import signing_secret_current

pytestmark = pytest.mark.usefixtures("webhook_settings")

CALLERS = ["anonymous", "other-organization", "reader", "member", "admin"]


@pytest.fixture
def callers(organization, org_member, org_admin):
    other = MembershipFactory(organization=OrganizationFactory(subdomain="globex"), role="admin")
    return {
        "anonymous": None,
        "other-organization": other.user,
        "reader": MembershipFactory(organization=organization, role="reader").user,
        "member": org_member,
        "admin": org_admin,
    }


@pytest.fixture
def hook(install_webhook, space, receiver):
    """An active webhook installation in a space, sending to the local receiver."""
    installation = install_webhook(space=space, url=receiver.url, space_content_updated=True)
    assert installation.status == "active"
    return installation


def finished(delivery_id):
    wait_until(lambda: Delivery.objects.get(pk=delivery_id).status not in Delivery.OPEN_STATUSES)
    return Delivery.objects.get(pk=delivery_id)


# --- Who may call what ------------------------------------------------------------------------

# endpoint: (method, url template, its action, the status for whoever may)
ENDPOINTS = {
    "delivery": ("get", "/deliveries/{delivery}/", Action.READ_LOGS, 200),
    "redeliver": ("post", "/deliveries/{delivery}/redeliver/", Action.REDELIVER, 202),
    "ping": ("post", "/installations/{installation}/webhook/ping/", Action.PING, 202),
    "secret": ("get", "/installations/{installation}/webhook/secret/", Action.ROTATE_SECRET, 200),
    "rotate": (
        "post",
        "/installations/{installation}/webhook/secret/rotate/",
        Action.ROTATE_SECRET,
        200,
    ),
}


@pytest.mark.parametrize("endpoint", list(ENDPOINTS))
@pytest.mark.parametrize("caller", CALLERS)
def test_who_may_call_each_endpoint(callers, hook, caller, endpoint):
    delivery = delivery_claim(
        webhook_ping_send(user=OPERATOR, installation=hook).pk
    )  # as a worker does
    delivery_settle(delivery, Result.succeeded(outcome="HTTP 200", attempts=1))
    method, template, action, allowed = ENDPOINTS[endpoint]
    url = API + template.format(delivery=delivery.pk, installation=hook.pk)
    secret = signing_secret_current(hook)

    response = getattr(api_client(callers[caller]), method)(url)

    expected = {"anonymous": 401, "other-organization": 404}
    expected |= {role: allowed if role in access.TABLE[action] else 403 for role in access.ROLES}
    assert response.status_code == expected[caller], response.content
    if caller == "other-organization":
        assert response.json() == NOT_FOUND
    if caller == "admin" and endpoint == "secret":
        assert response.json()["secret"] == secret
    else:
        assert secret not in response.content.decode()


def test_an_installation_token_cannot_use_the_controls(hook):
    client = api_client(token=hook.api_token)
    webhook = f"{API}/installations/{hook.pk}/webhook"
    assert client.post(f"{webhook}/ping/").status_code == 403
    assert client.get(f"{webhook}/secret/").status_code == 403
    assert client.post(f"{webhook}/secret/rotate/").status_code == 403


# --- The test ping ----------------------------------------------------------------------------


@pytest.mark.slow
@pytest.mark.usefixtures("celery_worker")
def test_a_ping_is_a_delivery_of_type_ping_that_reaches_the_receiver(org_admin, hook, receiver):
    client = api_client(org_admin)
    response = client.post(f"{API}/installations/{hook.pk}/webhook/ping/")
    assert response.status_code == 202
    answer = response.json()
    assert answer["type"] == "ping" and answer["status"] == "pending"
    (received,) = receiver.wait_for(1)
    assert json.loads(received.body) == {
        "type": "ping",
        "eventId": answer["eventId"],
        "installationId": hook.pk,
    }
    assert finished(answer["id"]).status == "succeeded"
    detail = client.get(f"{API}/deliveries/{answer['id']}/").json()
    (attempt,) = detail["attemptLog"]
    assert attempt["chain"] == attempt["number"] == 1
    assert (attempt["statusCode"], attempt["outcome"], attempt["error"]) == (200, "succeeded", "")
    assert attempt["responseBody"] == '{"ok":true}'
    assert attempt["responseHeaders"]["Content-Length"] == "11"
    assert attempt["durationMs"] >= 0 and attempt["nextDelay"] is None
    assert attempt["startedAt"]


def test_a_ping_is_refused_when_it_could_not_be_delivered(
    org_admin, organization, hook, install_webhook, site, webhook_integration
):
    client = api_client(org_admin)
    installation_pause(user=org_admin, installation=hook)
    paused = client.post(f"{API}/installations/{hook.pk}/webhook/ping/")
    assert paused.status_code == 400 and error_attrs(paused) == ["status"]
    assert "paused" in paused.json()["errors"][0]["detail"]

    pending = install_webhook(site=site)  # no URL yet
    assert pending.status == "pending"
    refused = client.post(f"{API}/installations/{pending.pk}/webhook/ping/")
    assert error_attrs(refused) == ["status"]

    tool = IntegrationFactory(name="tool", organization=organization)
    no_webhooks = [
        Installation.objects.get(integration=webhook_integration, level="organization"),
        installation_create(user=org_admin, integration=tool, organization=organization),
    ]
    admin = api_client(org_admin)
    for installation in no_webhooks:
        webhook = f"{API}/installations/{installation.pk}/webhook"
        for response in (
            admin.post(f"{webhook}/ping/"),
            admin.get(f"{webhook}/secret/"),
            admin.post(f"{webhook}/secret/rotate/"),
        ):
            assert response.status_code == 400 and error_attrs(response) == ["installation"]
    assert not Delivery.objects.filter(event__type="ping").exists()


# --- Redelivery -------------------------------------------------------------------------------


@pytest.mark.slow
@pytest.mark.usefixtures("celery_worker")
def test_a_redelivery_keeps_the_event_id_and_starts_chain_2(org_admin, hook, receiver):
    receiver.respond(404, 200)
    client = api_client(org_admin)
    delivery_id = client.post(f"{API}/installations/{hook.pk}/webhook/ping/").json()["id"]
    assert finished(delivery_id).status == "failed"

    response = client.post(f"{API}/deliveries/{delivery_id}/redeliver/")
    assert response.status_code == 202
    assert (response.json()["chain"], response.json()["status"]) == (2, "pending")
    first, second = receiver.wait_for(2)
    assert finished(delivery_id).status == "succeeded"

    assert first.body == second.body
    assert first.headers["X-Service-Delivery"] == second.headers["X-Service-Delivery"]
    detail = client.get(f"{API}/deliveries/{delivery_id}/").json()
    assert detail["eventId"] == first.headers["X-Service-Delivery"]
    assert [(a["chain"], a["number"], a["statusCode"]) for a in detail["attemptLog"]] == [
        (1, 1, 404),
        (2, 1, 200),
    ]


def test_a_delivery_in_progress_is_not_redelivered(org_admin, hook):
    delivery = webhook_ping_send(user=OPERATOR, installation=hook)  # pending: no worker runs here
    response = api_client(org_admin).post(f"{API}/deliveries/{delivery.pk}/redeliver/")
    assert response.status_code == 400 and error_attrs(response) == ["status"]
    assert Delivery.objects.get(pk=delivery.pk).chain == 1


# --- The delivery states, filtered ------------------------------------------------------------


@pytest.mark.usefixtures("celery_worker")
def test_every_delivery_state_shows_and_filters(org_admin, hook, receiver, settings):
    client = api_client(org_admin)
    ping_url = f"{API}/installations/{hook.pk}/webhook/ping/"
    receiver.respond(200)
    succeeded = finished(client.post(ping_url).json()["id"])
    receiver.respond(400)
    failed = finished(client.post(ping_url).json()["id"])
    settings.WEBHOOK_RETRY_BASE_DELAY = 60  # the retry stays scheduled while the test runs
    receiver.respond(503)
    retrying = client.post(ping_url).json()["id"]
    wait_until(lambda: Delivery.objects.get(pk=retrying).status == "retrying")
    installation_pause(user=OPERATOR, installation=hook)
    client.post(f"{API}/deliveries/{succeeded.pk}/redeliver/")  # the worker cancels it
    assert finished(succeeded.pk).status == "cancelled"

    listing = f"{API}/installations/{hook.pk}/deliveries/"
    states = {row["id"]: row["status"] for row in client.get(listing).json()["results"]}
    assert states == {
        succeeded.pk: "cancelled",
        failed.pk: "failed",
        retrying: "retrying",
    }
    for status in ("cancelled", "failed", "retrying"):
        rows = client.get(listing, {"status": status, "type": "ping"}).json()["results"]
        assert [row["status"] for row in rows] == [status]
    retry_row = client.get(f"{API}/deliveries/{retrying}/").json()
    assert retry_row["nextAttemptAt"] is not None
    assert retry_row["attemptLog"][0]["nextDelay"] > 50
    assert client.get(listing, {"type": "space_content_updated"}).json()["results"] == []
    assert error_attrs(client.get(listing, {"status": "lost"})) == ["status"]


@pytest.mark.slow
def test_a_pending_delivery_is_listed_as_pending(org_admin, hook):
    delivery = webhook_ping_send(
        user=OPERATOR, installation=hook
    )  # no worker here: it stays pending
    listing = f"{API}/installations/{hook.pk}/deliveries/"
    rows = api_client(org_admin).get(listing, {"status": "pending", "type": "ping"}).json()
    assert [row["id"] for row in rows["results"]] == [delivery.pk]
    assert "attemptLog" not in rows["results"][0]  # the attempts are on the delivery's page


# --- The signing secret -----------------------------------------------------------------------


@pytest.mark.slow
@pytest.mark.usefixtures("celery_worker")
def test_a_rotated_secret_and_the_old_one_both_verify_during_the_overlap(org_admin, hook, receiver):
    client = api_client(org_admin)
    secret_url = f"{API}/installations/{hook.pk}/webhook/secret/"
    old = client.get(secret_url).json()
    assert old["secret"].startswith("whsec_") and old["previous"] == []

    rotated = client.post(f"{secret_url}rotate/")
    assert rotated.status_code == 200
    new = rotated.json()["secret"]
    assert new.startswith("whsec_") and new != old["secret"]
    assert old["secret"] not in rotated.content.decode()
    shown = client.get(secret_url).json()
    assert shown["secret"] == new
    (previous,) = shown["previous"]
    assert set(previous) == {"createdAt", "expiresAt"}
    expires = timezone.datetime.fromisoformat(previous["expiresAt"])
    assert abs(expires - (timezone.now() + timedelta(hours=24))) < timedelta(minutes=1)

    client.post(f"{API}/installations/{hook.pk}/webhook/ping/")
    (received,) = receiver.wait_for(1)
    header = received.headers["X-Service-Signature"]
    assert verify_signature(received.body, header, new)
    assert verify_signature(received.body, header, old["secret"])
