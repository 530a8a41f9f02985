"""The delivery log's "Replay a time range" (Django test client): the form, the jobs with their
progress and a cancel, bad input, and who may."""

from datetime import timedelta

import pytest
from django.utils import timezone

from docplatform.events.models import Delivery
from docplatform.revisions import space_content_update
from integrations.operators import OPERATOR
from integrations.services.installations import (
    installation_pause,
    installation_resume,
)
from tests.conftest import wait_until
from tests.marketplace.conftest import messages_of, url
from webhooks.models import Replay

pytestmark = pytest.mark.usefixtures("webhook_settings")

PAGES = [{"path": "p", "title": "P", "body": "b"}]
FORMAT = "%Y-%m-%dT%H:%M"


def missed(hook, space, count):
    installation_pause(user=OPERATOR, installation=hook)
    for _ in range(count):
        space_content_update(space=space, pages=PAGES)
    installation_resume(user=OPERATOR, installation=hook)


def the_last_hour() -> dict:
    now = timezone.now()
    return {
        "replay-since": (now - timedelta(hours=1)).strftime(FORMAT),
        "replay-until": (now + timedelta(minutes=1)).strftime(FORMAT),
    }


def test_one_missed_event_is_one_event_in_the_message(
    admin_client, hook, acme_space, django_capture_on_commit_callbacks
):
    missed(hook, acme_space, 1)
    with django_capture_on_commit_callbacks():
        response = admin_client.post(url("delivery-replay", hook), the_last_hour(), follow=True)
    assert messages_of(response) == ["Replaying 1 event."]


def test_a_replay_is_asked_shown_with_its_progress_and_cancelled(
    admin_client, hook, acme_space, django_capture_on_commit_callbacks
):
    page = admin_client.get(url("deliveries", hook)).content.decode()
    assert "Replay a time range" in page and 'name="replay-include_delivered"' in page
    missed(hook, acme_space, 3)

    with django_capture_on_commit_callbacks() as callbacks:  # no worker runs it here
        response = admin_client.post(url("delivery-replay", hook), the_last_hour(), follow=True)
    assert len(callbacks) == 1
    assert messages_of(response) == ["Replaying 3 events."]
    job = Replay.objects.get()
    page = response.content.decode()
    assert "0 of 3 events queued" in page and "Cancel replay" in page

    response = admin_client.post(url("delivery-replay-cancel", hook, job.pk), follow=True)
    assert messages_of(response) == [f"Replay {job.pk} is cancelled."]
    assert "Cancel replay" not in response.content.decode()
    job.refresh_from_db()
    assert job.status == "cancelled"
    response = admin_client.post(url("delivery-replay-cancel", hook, job.pk), follow=True)
    assert messages_of(response) == ["Not cancelled: the replay is cancelled."]


@pytest.mark.slow
@pytest.mark.usefixtures("celery_worker")
def test_a_replay_sends_what_was_missed(admin_client, hook, acme_space, receiver):
    missed(hook, acme_space, 2)
    admin_client.post(url("delivery-replay", hook), the_last_hour())
    receiver.wait_for(2)
    wait_until(lambda: Delivery.objects.filter(installation=hook, status="succeeded").count() == 2)
    wait_until(lambda: Replay.objects.get().status == "done")
    page = admin_client.get(url("deliveries", hook)).content.decode()
    assert "2 of 2 events queued" in page and "2 succeeded" in page


def test_bad_input_is_refused_with_nothing_written(admin_client, hook):
    now = timezone.now()
    for data, message in [
        ({}, "since: Give the start of the time range. until: Give the end of the time range."),
        (
            {"replay-since": "last week", "replay-until": now.strftime(FORMAT)},
            "since: Enter a date and time as YYYY-MM-DDTHH:MM (UTC).",
        ),
        (
            {"replay-since": now.strftime(FORMAT), "replay-until": "2020-01-01T00:00"},
            "until: must be after since",
        ),
        (
            {"replay-since": "2020-01-01T00:00", "replay-until": now.strftime(FORMAT)},
            "since: before the retention period",
        ),
    ]:
        response = admin_client.post(url("delivery-replay", hook), data, follow=True)
        assert response.status_code == 200
        assert messages_of(response)[0].startswith("Nothing was replayed: " + message), data
    assert not Replay.objects.exists()


def test_only_admins_replay_and_cancel(client, org_member, hook):
    job = Replay.objects.create(
        installation=hook, since=timezone.now() - timedelta(hours=1), until=timezone.now()
    )
    client.force_login(org_member)
    assert client.post(url("delivery-replay", hook), the_last_hour()).status_code == 403
    assert client.post(url("delivery-replay-cancel", hook, job.pk)).status_code == 403
    job.refresh_from_db()
    assert job.status == "queued" and Replay.objects.count() == 1
