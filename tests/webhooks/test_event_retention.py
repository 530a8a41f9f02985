"""Events older than EVENT_RETENTION_DAYS are purged hourly (a Celery beat task), with their
settled deliveries and those deliveries' attempts, a batch at a time; an event whose delivery
is pending, retrying or held by a worker stays until it is settled; younger ones stay. A
replay never trips over an event purged after it chose it."""

import uuid
from datetime import timedelta

import pytest
from django.core.exceptions import ValidationError
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from docplatform.events.leases import Result, delivery_claim, delivery_settle
from docplatform.events.models import Delivery, Event
from docplatform.events.outbox import deliveries_add
from docplatform.events.publisher import publish
from docplatform.tasks import purge_events
from integrations.operators import OPERATOR
from tests.conftest import wait_until
from webhooks.models import DeliveryAttempt
from webhooks.rules import WEBHOOK_CONSUMER
from webhooks.services.ping import webhook_ping_send
from webhooks.services.replay import replay_range_check
from webhooks.tasks import purge_deliveries

pytestmark = pytest.mark.usefixtures("webhook_settings")


@pytest.fixture
def hook(install_webhook, space, receiver):
    return install_webhook(space=space, url=receiver.url, space_content_updated=True)


def ping(hook, *, days_ago: float, status: str | None = None) -> Delivery:
    """A ping delivery to the hook, its event fired ``days_ago``; settled as ``status``
    (succeeded or failed, with an attempt logged), held by a worker (``claimed``), waiting
    for its retry (``retrying``) or left pending (None)."""
    delivery = webhook_ping_send(user=OPERATOR, installation=hook)
    backdate(delivery.event_id, days_ago=days_ago)
    if status is None:
        return delivery
    claimed = delivery_claim(delivery.pk)
    if status == "claimed":
        return claimed
    if status == "retrying":
        delivery_settle(claimed, Result.retry(retry_in=60, error="HTTP 503", attempts=1))
        return claimed
    DeliveryAttempt.objects.create(
        delivery=claimed,
        number=1,
        started_at=timezone.now(),
        duration_ms=5,
        url=hook.configuration["url"],
        status_code=200 if status == "succeeded" else 500,
        outcome=status,
    )
    result = (
        Result.succeeded(outcome="HTTP 200", attempts=1)
        if status == "succeeded"
        else Result.failed(error="HTTP 500", outcome="HTTP 500", attempts=1)
    )
    delivery_settle(claimed, result)
    return claimed


def backdate(event_id, *, days_ago: float) -> None:
    Event.objects.filter(pk=event_id).update(created_at=timezone.now() - timedelta(days=days_ago))


def events_left() -> set[str]:
    return set(Event.objects.values_list("pk", flat=True))


def test_old_settled_events_go_with_their_deliveries_open_and_young_ones_stay(hook, settings):
    assert settings.EVENT_RETENTION_DAYS == 90  # the default
    succeeded = ping(hook, days_ago=91, status="succeeded")
    failed = ping(hook, days_ago=120, status="failed")
    pending = ping(hook, days_ago=91)
    retrying = ping(hook, days_ago=91, status="retrying")
    held = ping(hook, days_ago=91, status="claimed")  # a worker is sending it now
    young = ping(hook, days_ago=89, status="succeeded")
    undelivered = Event.objects.create(
        type="space_view", organization=hook.organization, payload={}
    )
    Event.objects.filter(pk=undelivered.pk).update(created_at=timezone.now() - timedelta(days=91))
    kept = {d.event_id for d in (pending, retrying, held, young)}
    before = events_left()

    assert purge_events() == 3  # the task beat runs hourly, run as a worker runs it
    assert events_left() == before - {succeeded.event_id, failed.event_id, undelivered.pk}
    assert kept <= events_left()
    gone = [succeeded.pk, failed.pk]
    assert not Delivery.objects.filter(pk__in=gone).exists()
    assert not DeliveryAttempt.objects.filter(delivery_id__in=gone).exists()
    assert Delivery.objects.filter(pk__in=[pending.pk, retrying.pk, held.pk]).count() == 3

    # Once its deliveries are settled, the next run purges an event; again, nothing more.
    delivery_settle(held, Result.succeeded(outcome="HTTP 200", attempts=1))
    assert purge_events() == 1
    assert held.event_id not in events_left()
    assert purge_events() == 0
    schedule = settings.CELERY_BEAT_SCHEDULE["purge-events"]
    assert (schedule["task"], schedule["schedule"]) == (purge_events.name, 3600.0)


def test_retention_is_a_setting(hook, settings):
    settings.EVENT_RETENTION_DAYS = 7
    week_old = ping(hook, days_ago=8, status="failed")
    fresh = ping(hook, days_ago=6, status="failed")
    assert purge_events() == 1
    assert events_left() >= {fresh.event_id} and week_old.event_id not in events_left()


def test_the_purge_goes_a_batch_at_a_time(hook, settings):
    settings.EVENT_PURGE_BATCH = 2
    old = [ping(hook, days_ago=100, status="succeeded") for _ in range(5)]
    young = ping(hook, days_ago=1, status="succeeded")
    with CaptureQueriesContext(connection) as queries:
        assert purge_events() == 5
    deletes = [q["sql"] for q in queries if q["sql"].startswith('DELETE FROM "docplatform_event"')]
    assert len(deletes) == 3  # 2 + 2 + 1, each in its own transaction
    assert not Event.objects.filter(pk__in=[d.event_id for d in old]).exists()
    assert young.event_id in events_left()


def test_settled_webhook_deliveries_have_their_own_retention_by_the_same_rule(hook, settings):
    """WEBHOOK_RETENTION_DAYS (30) purges settled deliveries and their attempts, whatever
    their events' age; an open delivery stays; their events stay for the events' purge."""
    done = ping(hook, days_ago=1, status="failed")
    fresh = ping(hook, days_ago=1, status="succeeded")
    still_open = ping(hook, days_ago=40)
    Delivery.objects.filter(pk__in=[done.pk, still_open.pk]).update(
        completed_at=timezone.now() - timedelta(days=31)
    )
    assert purge_deliveries() == 1
    assert set(Delivery.objects.values_list("pk", flat=True)) == {fresh.pk, still_open.pk}
    assert not DeliveryAttempt.objects.filter(delivery_id=done.pk).exists()
    assert done.event_id in events_left()


def test_a_replay_skips_an_event_purged_after_it_chose_it(hook, settings):
    gone = ping(hook, days_ago=100, status="failed").event_id
    assert purge_events() == 1
    assert deliveries_add(WEBHOOK_CONSUMER, [(gone, hook.pk, uuid.uuid4())]) == []
    # and a replay's range stops where events are purged, when that is sooner than deliveries
    settings.EVENT_RETENTION_DAYS, settings.WEBHOOK_RETENTION_DAYS = 7, 30
    now = timezone.now()
    with pytest.raises(ValidationError, match="events are kept 7 days"):
        replay_range_check(now - timedelta(days=8), now, now=now)


@pytest.mark.slow
def test_a_worker_runs_the_purge_task(celery_worker, hook):
    # The worker sends the pings itself (claiming them here would race it), then purges.
    old, young = (webhook_ping_send(user=OPERATOR, installation=hook) for _ in range(2))
    sent = Delivery.objects.filter(pk__in=[old.pk, young.pk]).exclude(
        status__in=Delivery.OPEN_STATUSES
    )
    wait_until(lambda: sent.count() == 2)
    backdate(old.event_id, days_ago=100)
    backdate(young.event_id, days_ago=1)
    publish(purge_events.name)
    wait_until(lambda: old.event_id not in events_left())
    assert young.event_id in events_left()
