"""Replay: an endpoint is sent the events of a time range it did not get (it was paused or
disabled), each once, with the eventId of its delivery to it (a stable one for an event it
never had a delivery of), through the real outbox, a real Celery worker and a local receiver;
cancelling stops it; bad input and other people are refused with nothing written."""

import json
import time
from datetime import timedelta

import pytest
from django.utils import timezone

from docplatform.events.models import Delivery, Event
from docplatform.revisions import space_content_update
from integrations.operators import OPERATOR
from integrations.services.installations import installation_pause, installation_resume
from tests.api_helpers import API, NOT_FOUND, api_client, error_attrs
from tests.conftest import wait_until
from tests.factories import MembershipFactory, OrganizationFactory
from tests.processes import manage_py
from webhooks.models import Replay
from webhooks.rules import replay_event_uuid
from webhooks.services.endpoints import endpoint_disable, endpoint_reenable

pytestmark = pytest.mark.usefixtures("webhook_settings")

PAGES = [{"path": "p", "title": "P", "body": "b"}]


@pytest.fixture
def hook(install_webhook, space, receiver):
    return install_webhook(space=space, url=receiver.url, space_content_updated=True)


def fire(space, count=1) -> list[Event]:
    before = set(Event.objects.values_list("pk", flat=True))
    for _ in range(count):
        space_content_update(space=space, pages=PAGES)
    return list(
        Event.objects.filter(type="space_content_updated")
        .exclude(pk__in=before)
        .order_by("created_at", "id")
    )


def replays_url(hook) -> str:
    return f"{API}/installations/{hook.pk}/webhook/replays/"


def last_hour() -> dict:
    now = timezone.now()
    return {"since": (now - timedelta(hours=1)).isoformat(), "until": now.isoformat()}


def event_ids_received(receiver, since=0) -> list[str]:
    return [json.loads(request.body)["eventId"] for request in receiver.requests[since:]]


def settled(replay_id):
    """The replay is done and what it queued is no longer being sent."""

    def check():
        job = Replay.objects.get(pk=replay_id)
        return (
            job.status == "done"
            and not Delivery.objects.filter(
                pk__in=job.delivery_ids, status__in=Delivery.OPEN_STATUSES
            ).exists()
        )

    return check


def wait_for_replay(client, hook, body) -> dict:
    response = client.post(replays_url(hook), body)
    assert response.status_code == 202, response.json()
    wait_until(settled(response.json()["id"]))
    return client.get(f"{replays_url(hook)}{response.json()['id']}/").json()


@pytest.mark.slow
@pytest.mark.usefixtures("celery_worker")
def test_a_replay_sends_what_a_paused_or_disabled_endpoint_missed_once_and_again_the_same_ids(
    hook, space, receiver, org_admin
):
    delivered = fire(space, 2)
    receiver.wait_for(2)  # settled before the endpoint is disabled, which cancels what is open
    wait_until(lambda: Delivery.objects.filter(installation=hook, status="succeeded").count() == 2)
    installation_pause(user=org_admin, installation=hook)
    missed = fire(space, 3)  # paused: no delivery is made
    installation_resume(user=org_admin, installation=hook)
    endpoint_disable(installation=hook, reason="failing")
    missed += fire(space, 1)  # disabled: none either
    endpoint_reenable(installation=hook, by=org_admin)
    delivered += fire(space, 1)
    receiver.wait_for(3)
    wait_until(lambda: Delivery.objects.filter(installation=hook, status="succeeded").count() == 3)
    original_ids = {
        d.event_id: str(d.event_uuid) for d in Delivery.objects.filter(installation=hook)
    }
    assert set(original_ids) == {event.pk for event in delivered}
    stable_ids = [str(replay_event_uuid(event.pk, hook.pk)) for event in missed]

    # The receiver refuses the first replay (410: failed at once, no retry).
    client = api_client(org_admin)
    receiver.respond(410)
    job = wait_for_replay(client, hook, last_hour())
    assert (job["status"], job["found"], job["queued"], job["skipped"]) == ("done", 4, 4, 0)
    assert (job["failed"], job["succeeded"]) == (4, 0)
    # Each missed event once (sent concurrently, so in any order).
    assert sorted(event_ids_received(receiver, 3)) == sorted(stable_ids)

    # Asked again: the same four, with the same eventIds.
    receiver.respond(200)
    job = wait_for_replay(client, hook, last_hour())
    assert (job["found"], job["succeeded"]) == (4, 4)
    assert sorted(event_ids_received(receiver, 7)) == sorted(stable_ids)

    # Everything got through: a third replay has nothing to send.
    job = client.post(replays_url(hook), last_hour()).json()
    assert (job["status"], job["found"]) == ("done", 0)
    assert len(receiver.requests) == 11

    # includeDelivered: every event of the hour, each with its own eventId.
    job = wait_for_replay(client, hook, last_hour() | {"includeDelivered": True})
    assert (job["found"], job["succeeded"]) == (7, 7)
    by_event = dict(original_ids) | {
        event.pk: stable for event, stable in zip(missed, stable_ids, strict=True)
    }
    assert sorted(event_ids_received(receiver, 11)) == sorted(by_event.values())
    assert len(by_event) == 7

    listed = client.get(replays_url(hook)).json()
    assert [replay["found"] for replay in listed] == [7, 0, 4, 4]


@pytest.mark.slow
@pytest.mark.usefixtures("celery_worker")
def test_cancel_stops_a_replay(hook, space, receiver, org_admin, settings):
    settings.WEBHOOK_REPLAY_BATCH = 2
    installation_pause(user=org_admin, installation=hook)
    missed = fire(space, 6)
    installation_resume(user=org_admin, installation=hook)
    receiver.respond((200, {}, b"", 1.5))  # slow: the first batch is still being sent
    client = api_client(org_admin)
    response = client.post(replays_url(hook), last_hour())
    assert response.status_code == 202
    job_url = f"{replays_url(hook)}{response.json()['id']}/"
    wait_until(lambda: client.get(job_url).json()["queued"] == 2)

    cancelled = client.post(f"{job_url}cancel/")
    assert cancelled.status_code == 200
    assert cancelled.json()["status"] == "cancelled"
    time.sleep(2.5)  # what a worker held ends; nothing more is queued or sent
    job = client.get(job_url).json()
    assert (job["status"], job["queued"], job["open"]) == ("cancelled", 2, 0)
    assert len(receiver.requests) <= 2
    assert not Delivery.objects.filter(event__in=missed[2:], installation=hook).exists()
    again = client.post(f"{job_url}cancel/")
    assert again.status_code == 400 and error_attrs(again) == ["status"]
    # One replay at a time, but a cancelled one is no obstacle.
    receiver.respond(200)
    assert client.post(replays_url(hook), last_hour()).status_code == 202


def test_one_replay_at_a_time(hook, space, org_admin, django_capture_on_commit_callbacks):
    installation_pause(user=org_admin, installation=hook)
    fire(space, 2)
    installation_resume(user=org_admin, installation=hook)
    client = api_client(org_admin)
    with django_capture_on_commit_callbacks() as callbacks:  # no worker runs it
        first = client.post(replays_url(hook), last_hour())
    assert first.status_code == 202 and len(callbacks) == 1
    assert (first.json()["status"], first.json()["found"]) == ("queued", 2)
    second = client.post(replays_url(hook), last_hour())
    assert second.status_code == 400 and error_attrs(second) == ["status"]


def test_the_replay_is_bounded(
    hook, space, org_admin, settings, django_capture_on_commit_callbacks
):
    settings.WEBHOOK_REPLAY_LIMIT = 3
    installation_pause(user=org_admin, installation=hook)
    missed = fire(space, 5)
    installation_resume(user=org_admin, installation=hook)
    with django_capture_on_commit_callbacks():
        job = api_client(org_admin).post(replays_url(hook), last_hour()).json()
    assert (job["matched"], job["found"]) == (5, 3)
    assert Replay.objects.get().event_ids == [event.pk for event in missed[:3]]


# --- Bad input, other people ---------------------------------------------------------------------


def test_bad_input_answers_field_errors_and_writes_nothing(hook, space, org_admin):
    installation_pause(user=org_admin, installation=hook)
    fire(space, 2)
    now = timezone.now()
    client = api_client(org_admin)
    deliveries = Delivery.objects.count()
    for body, attrs in [
        ({"since": now.isoformat(), "until": (now - timedelta(hours=1)).isoformat()}, ["until"]),
        ({"since": (now - timedelta(days=31)).isoformat(), "until": now.isoformat()}, ["since"]),
        ({"since": "yesterday", "until": now.isoformat()}, ["since"]),
        ({"since": now.isoformat(), "until": "2026-13-01T00:00:00Z"}, ["until"]),
        ({"until": now.isoformat()}, ["since"]),
        (last_hour() | {"includeDelivered": "maybe"}, ["includeDelivered"]),
        (last_hour(), ["status"]),  # paused: it receives nothing now
    ]:
        response = client.post(replays_url(hook), body)
        assert response.status_code == 400, body
        assert error_attrs(response) == attrs, body
    installation_resume(user=org_admin, installation=hook)
    endpoint_disable(installation=hook, reason="failing")
    response = client.post(replays_url(hook), last_hour())
    assert response.status_code == 400 and error_attrs(response) == ["endpoint"]
    assert not Replay.objects.exists()
    assert Delivery.objects.count() == deliveries


def test_only_the_organizations_admins_replay(hook, org_admin, org_member, organization):
    other = MembershipFactory(organization=OrganizationFactory(subdomain="globex"), role="admin")
    job = Replay.objects.create(
        installation=hook, since=timezone.now() - timedelta(hours=1), until=timezone.now()
    )
    urls = [replays_url(hook), f"{replays_url(hook)}{job.pk}/"]
    cancel = f"{replays_url(hook)}{job.pk}/cancel/"
    member = api_client(org_member)
    for target in urls:
        assert member.get(target).status_code == 403
    assert member.post(replays_url(hook), last_hour()).status_code == 403
    assert member.post(cancel).status_code == 403
    outsider = api_client(other.user)
    for target in urls:
        assert outsider.get(target).json() == NOT_FOUND
    assert outsider.post(replays_url(hook), last_hour()).status_code == 404
    assert outsider.post(cancel).status_code == 404
    assert api_client().post(replays_url(hook), last_hour()).status_code in (401, 403)
    assert api_client(org_admin).get(f"{replays_url(hook)}999999/").status_code == 404
    assert Replay.objects.get().status == "queued"
    assert Replay.objects.count() == 1


def test_another_integrations_installation_is_refused(org_admin, organization):
    from integrations.services.installations import installation_create
    from tests.factories import IntegrationFactory

    other = installation_create(
        user=org_admin,
        integration=IntegrationFactory(name="notifier", organization=organization),
        organization=organization,
    )
    response = api_client(org_admin).post(
        f"{API}/installations/{other.pk}/webhook/replays/", last_hour()
    )
    assert response.status_code == 400 and error_attrs(response) == ["installation"]


def test_the_stable_id_is_the_same_for_the_same_event_and_endpoint():
    assert replay_event_uuid("e1", "i1") == replay_event_uuid("e1", "i1")
    assert replay_event_uuid("e1", "i1") != replay_event_uuid("e1", "i2")
    assert replay_event_uuid("e1", "i1").version == 5


# --- The command line ----------------------------------------------------------------------------


@pytest.mark.slow
@pytest.mark.usefixtures("celery_worker")
def test_the_command_replays_and_waits(hook, space, receiver):
    installation_pause(user=OPERATOR, installation=hook)
    missed = fire(space, 2)
    installation_resume(user=OPERATOR, installation=hook)
    since = (timezone.now() - timedelta(hours=1)).strftime("%Y-%m-%dT%H:%M:%S")

    done = manage_py("webhooks", "replay", hook.pk, "--since", since, "--wait", timeout=90)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0].endswith(": 2 events found")
    assert "done: 2 of 2 queued, 0 skipped; 2 succeeded" in lines[-1]
    assert sorted(event_ids_received(receiver)) == sorted(
        str(replay_event_uuid(event.pk, hook.pk)) for event in missed
    )

    again = manage_py("webhooks", "replay", hook.pk, "--since", since, "--include-delivered")
    assert again.returncode == 0, again.stderr
    assert again.stdout.strip().endswith(": 2 events found")
    wait_until(lambda: not Replay.objects.filter(status__in=["queued", "running"]).exists())

    refused = manage_py("webhooks", "replay", hook.pk, "--since", "2001-01-01")
    assert refused.returncode == 1
    assert "since: before the retention period" in refused.stderr
    assert manage_py("webhooks", "replay", "nope", "--since", since).returncode == 2
    assert manage_py("webhooks", "replay", hook.pk, "--since", "soon").returncode == 2
