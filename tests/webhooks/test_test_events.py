"""Test events (``trigger``'s API, the marketplace's Send test event) are tests everywhere: their
body carries ``"test": true``, the events API and the delivery API say ``test: true``, the
delivery log shows a "test" badge, and they never reach another installation: a replay skips
them (the bug: a replay sent one endpoint the sample events fired to another alone), and a
redelivery sends one again to its own installation only.

Real Celery worker, a webhook installation posting to a local receiver, and another
integration's installation in the same space."""

import json
from datetime import timedelta

import pytest
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from docplatform.events.models import Delivery, Event
from docplatform.events.outbox import deliveries_add
from docplatform.revisions import space_content_update
from integrations.services.installations import installation_create
from tests.api_helpers import API, api_client
from tests.conftest import wait_until
from tests.factories import IntegrationFactory
from webhooks.models import Replay
from webhooks.rules import WEBHOOK_CONSUMER, replay_event_uuid

pytestmark = pytest.mark.usefixtures("webhook_settings", "celery_worker")


@pytest.fixture
def hooks(install_webhook, space, receiver, org_admin, organization):
    """The space's webhook endpoint (``a``) and another integration's installation in the same
    space (``other``), as an author's under ``trigger``: its test events are its alone."""
    other = IntegrationFactory(name="hello", organization=organization)
    return {
        "a": install_webhook(space=space, url=receiver.url_for("/a"), space_content_updated=True),
        "other": installation_create(
            user=org_admin, integration=other, organization=organization, space=space
        ),
    }


def settled():
    wait_until(lambda: not Delivery.objects.filter(status__in=Delivery.OPEN_STATUSES).exists())


def bodies(receiver, path) -> list[dict]:
    return [json.loads(request.body) for request in receiver.to(path)]


def send_test_events(org_admin, hook) -> list[Delivery]:
    """One through the API ``trigger`` calls, one through the marketplace's Send test event."""
    triggered = api_client(org_admin).post(
        f"{API}/installations/{hook.pk}/test-events/", {"type": "space_content_updated"}
    )
    assert triggered.status_code == 201, triggered.json()
    assert triggered.json()["test"] is True
    browser = Client()
    browser.force_login(org_admin)
    sent = browser.post(
        reverse("marketplace:delivery-test-event", args=["acme", hook.pk]),
        {"event_type": "space_content_updated"},
    )
    assert sent.status_code == 302
    return list(Delivery.objects.filter(event__test=True).order_by("id"))


def test_a_replay_never_sends_a_test_event(hooks, space, receiver, org_admin):
    """The bug: a replay sent an endpoint the sample events ``trigger`` had fired to another
    installation of its space alone (and would send it its own again)."""
    own = send_test_events(org_admin, hooks["a"])
    triggered = api_client(org_admin).post(
        f"{API}/installations/{hooks['other'].pk}/test-events/", {"type": "space_content_updated"}
    )
    assert triggered.status_code == 201 and triggered.json()["test"] is True
    space_content_update(space=space, pages=[{"path": "p", "title": "P"}])  # a real one
    receiver.wait_for(3)  # the 2 test events and the real one
    settled()
    assert [body.get("test") for body in bodies(receiver, "/a")].count(True) == 2
    others = Event.objects.get(deliveries__installation=hooks["other"], test=True)

    client = api_client(org_admin)
    now = timezone.now()
    hour = {"since": (now - timedelta(hours=1)).isoformat(), "until": now.isoformat()}
    for body, found in ((hour, 0), (hour | {"includeDelivered": True}, 1)):
        asked = client.post(f"{API}/installations/{hooks['a'].pk}/webhook/replays/", body)
        assert asked.status_code == 202, asked.json()
        assert asked.json()["found"] == found  # never another's test event, nor its own
        replay = Replay.objects.filter(pk=asked.json()["id"])
        wait_until(lambda replay=replay: replay.get().status == "done")
    receiver.wait_for(4)
    settled()
    replayed = bodies(receiver, "/a")[3:]
    assert [(body["type"], "test" in body) for body in replayed] == [
        ("space_content_updated", False)
    ]
    assert len(receiver.requests) == 4
    assert not Delivery.objects.filter(event=others, installation=hooks["a"]).exists()
    assert Delivery.objects.filter(event__in=[d.event for d in own]).count() == 2

    # The outbox's one door for deliveries of events already fired adds none of a test event.
    uuid = replay_event_uuid(others.pk, hooks["a"].pk)
    assert deliveries_add(WEBHOOK_CONSUMER, [(others.pk, hooks["a"].pk, uuid)]) == []
    assert not Delivery.objects.filter(event=others, installation=hooks["a"]).exists()


def test_a_redelivery_sends_a_test_event_to_its_own_installation_alone(hooks, receiver, org_admin):
    first, _ = send_test_events(org_admin, hooks["a"])
    receiver.wait_for(2)
    settled()
    answer = api_client(org_admin).post(f"{API}/deliveries/{first.pk}/redeliver/")
    assert answer.status_code == 202, answer.json()
    assert answer.json()["test"] is True
    receiver.wait_for(3)
    settled()
    again = bodies(receiver, "/a")[-1]
    assert again["test"] is True and again["eventId"] == str(first.event_uuid)
    assert len(receiver.requests) == 3
    assert Delivery.objects.filter(event=first.event).count() == 1


def test_the_events_api_and_the_delivery_log_show_tests(
    hooks, space, receiver, org_admin, organization
):
    (triggered, sent) = send_test_events(org_admin, hooks["a"])
    space_content_update(space=space, pages=[{"path": "p", "title": "P"}])
    receiver.wait_for(3)
    settled()

    listed = api_client(org_admin).get(f"{API}/orgs/{organization.pk}/events/").json()
    items = listed["results"] if isinstance(listed, dict) else listed
    by_id = {item["id"]: item["test"] for item in items}
    assert by_id[triggered.event_id] is True and by_id[sent.event_id] is True
    real = Event.objects.get(test=False, type="space_content_updated")
    assert by_id[real.pk] is False
    deliveries = api_client(org_admin).get(f"{API}/installations/{hooks['a'].pk}/deliveries/")
    rows = deliveries.json()
    rows = rows["results"] if isinstance(rows, dict) else rows
    assert sorted(row["test"] for row in rows) == [False, True, True]

    browser = Client()
    browser.force_login(org_admin)
    log = browser.get(
        reverse("marketplace:deliveries", args=["acme", hooks["a"].pk])
    ).content.decode()
    rows_html = log.split("<tbody>", 1)[1].split("</tbody>", 1)[0].split("<tr")[1:]
    badged = [str(triggered.event_uuid) in row or str(sent.event_uuid) in row for row in rows_html]
    assert ['class="badge test-event"' in row for row in rows_html] == badged
    assert badged.count(True) == 2 and len(rows_html) == 3
    page = browser.get(
        reverse("marketplace:delivery", args=["acme", hooks["a"].pk, triggered.pk])
    ).content.decode()
    assert 'class="badge test-event"' in page.split("</h1>", 1)[0]
    real_delivery = Delivery.objects.get(event=real, installation=hooks["a"])
    page = browser.get(
        reverse("marketplace:delivery", args=["acme", hooks["a"].pk, real_delivery.pk])
    ).content.decode()
    assert "test-event" not in page.split("</h1>", 1)[0]
