"""The drain request flag and the publisher's breaker, against a real broker (one of the
test's own, which no worker reads: the tests count what was queued).

A drain request is marked as being published before the publish and as sent after it; a
commit in another process that finds it still being published sends a drain of its own, so a
publish that hangs or fails never holds up other processes' deliveries.
"""

import time
from datetime import timedelta

import pytest
from celery.signals import before_task_publish
from django.utils import timezone

from docplatform.events.models import DrainRequest
from docplatform.events.outbox import drain_release, drain_request
from docplatform.events.publisher import BrokerUnavailable, publish
from tests.conftest import broker_unreachable

pytestmark = pytest.mark.django_db(transaction=True)

DRAIN = "webhooks.tasks.deliver_due"


def flag():
    row = DrainRequest.objects.filter(consumer="webhook").first()
    return row.requested_at if row else None


@pytest.fixture
def while_publishing():
    """Run a function in the middle of each publish (after the flag is marked, before the
    broker is written to), as another process or a drain would."""
    actions = []

    def handler(**kwargs):
        for action in actions:
            action()

    before_task_publish.connect(handler, weak=False)
    yield actions.append
    before_task_publish.disconnect(handler)


def test_one_drain_is_sent_and_marked_sent_then_commits_send_none(private_broker):
    before = timezone.now()
    assert drain_request("webhook") is True
    assert before <= flag() <= timezone.now()  # sent: a time that has passed
    assert drain_request("webhook") is False
    assert private_broker.tasks("webhooks") == [DRAIN]


def test_a_request_still_being_published_elsewhere_is_taken_over(private_broker):
    """Another process marked the drain as being published (its deadline, in the future) and
    waits on its broker: a commit here sends a drain of its own at once."""
    DrainRequest.objects.create(
        consumer="webhook", requested_at=timezone.now() + timedelta(seconds=5)
    )
    assert drain_request("webhook") is True
    assert private_broker.tasks("webhooks") == [DRAIN]
    assert flag() <= timezone.now()


def test_a_drain_that_caught_up_during_the_publish_is_not_marked_sent_afterwards(
    private_broker, while_publishing
):
    """The drain can start, catch up and clear the flag before the publish returns: the flag
    then stays clear, or the next commit would queue no drain though none is coming."""
    while_publishing(lambda: drain_release("webhook"))
    assert drain_request("webhook") is True
    assert flag() is None


def test_a_failed_publish_clears_its_own_request_only(private_broker, while_publishing, settings):
    settings.BROKER_BACKOFF_SECONDS = 0  # each publish tries the broker
    with broker_unreachable():
        assert drain_request("webhook") is False
        assert flag() is None  # the next commit tries again

        other = timezone.now() + timedelta(seconds=7)
        while_publishing(
            lambda: DrainRequest.objects.filter(consumer="webhook").update(requested_at=other)
        )
        assert drain_request("webhook") is False
        assert flag() == other  # another process took over meanwhile: left alone
    assert private_broker.tasks("webhooks") == []


@pytest.mark.slow
def test_after_a_failure_the_breaker_fails_publishes_at_once_then_tries_again(
    private_broker, settings
):
    settings.BROKER_BACKOFF_SECONDS = 0.5
    with broker_unreachable():
        with pytest.raises(BrokerUnavailable, match="Error"):
            publish(DRAIN)
        started = time.monotonic()
        with pytest.raises(BrokerUnavailable, match="failed a moment ago"):
            publish(DRAIN)
        assert time.monotonic() - started < 0.05
    publish(DRAIN)  # another broker (the private one): not affected by the breaker
    assert private_broker.tasks("webhooks") == [DRAIN]
    time.sleep(0.6)
    with broker_unreachable(), pytest.raises(BrokerUnavailable, match="Error"):
        publish(DRAIN)  # tried again (and failed again) once the backoff is over
