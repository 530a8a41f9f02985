"""One retry policy for the outbox's consumers (``docplatform.events.retries``): how many
retries a delivery gets, the delay before each and which outcome makes which delivery status.
Changed in that one place, the webhook drain and the runtime's deliveries both follow."""

import pytest

from docplatform.events import retries
from docplatform.events.models import Delivery
from docplatform.revisions import space_content_update
from integrations.gateway.failures import IntegrationFault, PlatformFault
from integrations.runtime.protocol import BUSY, INTEGRATION_ERROR
from integrations.services import runtime_deliveries
from webhooks.models import DeliveryAttempt
from webhooks.services.delivery import webhook_deliver_due


def unreachable() -> PlatformFault:
    return PlatformFault("runtime_unavailable", "the runtime host cannot be reached")


def runtime_result(failure, attempts: int):
    return runtime_deliveries._failed(failure, attempts)


@pytest.fixture
def exact_delays(monkeypatch):
    monkeypatch.setattr(retries, "JITTER", 0.0)


def test_the_runtime_follows_the_schedule_and_the_outcomes(exact_delays, settings):
    settings.RUNTIME_RETRY_BASE_DELAY = 2.0
    results = [runtime_result(unreachable(), attempt) for attempt in (1, 2, 3, 4)]
    assert [result.status for result in results] == ["retrying"] * 3 + ["failed"]
    assert [result.retry_in for result in results] == [2.0, 4.0, 8.0, None]
    busy = runtime_result(IntegrationFault(BUSY, "the runtime is busy"), 1)
    assert busy.status == "retrying"
    crashed = runtime_result(IntegrationFault(INTEGRATION_ERROR, "it raised"), 1)
    assert (crashed.status, crashed.error) == ("failed", "it raised")


def test_the_delays_are_jittered_for_both_within_ten_percent(settings):
    settings.RUNTIME_RETRY_BASE_DELAY = 2.0
    delays = {runtime_result(unreachable(), 1).retry_in for _ in range(200)}
    assert min(delays) >= 1.8 and max(delays) <= 2.2 and len(delays) > 1
    delays = {retries.retry_delay(1.0, 3) for _ in range(200)}
    assert min(delays) >= 3.6 and max(delays) <= 4.4 and len(delays) > 1


@pytest.mark.slow
@pytest.mark.usefixtures("transactional_db", "private_broker", "webhook_settings")
def test_changing_the_policy_in_its_one_home_changes_both_consumers(
    monkeypatch, exact_delays, settings, receiver, install_webhook, space
):
    settings.WEBHOOK_RETRY_BASE_DELAY = 30.0  # a retry stays queued
    settings.RUNTIME_RETRY_BASE_DELAY = 2.0
    receiver.respond(503, 503)
    install_webhook(space=space, url=receiver.url, space_content_updated=True)

    # As it stands: a 503 is retried, after the base delay.
    space_content_update(space=space, pages=[{"path": "p", "title": "P"}])
    assert webhook_deliver_due() == 1
    (first,) = Delivery.objects.filter(consumer="webhook")
    assert (first.status, first.attempts) == ("retrying", 1)
    assert DeliveryAttempt.objects.get(delivery=first).next_delay == 30.0
    assert runtime_result(unreachable(), 1).status == "retrying"

    # One retry fewer for everyone (none at all), in the policy alone.
    monkeypatch.setattr(retries, "MAX_RETRIES", 0)
    space_content_update(space=space, pages=[{"path": "q", "title": "Q"}])
    assert webhook_deliver_due() == 1
    second = Delivery.objects.filter(consumer="webhook").exclude(pk=first.pk).get()
    assert (second.status, second.attempts) == ("failed", 1)
    assert second.outcome == "HTTP 503 after the last retry"
    assert DeliveryAttempt.objects.get(delivery=second).outcome == "failed"
    failed = runtime_result(unreachable(), 1)
    assert (failed.status, failed.retry_in) == ("failed", None)

    # A longer schedule: three times the base, then twice as long each time.
    monkeypatch.setattr(retries, "MAX_RETRIES", 3)
    monkeypatch.setattr(retries, "retry_delay", lambda base, attempt: 3 * base * 2 ** (attempt - 1))
    assert runtime_result(unreachable(), 2).retry_in == 12.0
    receiver.respond(503)
    space_content_update(space=space, pages=[{"path": "r", "title": "R"}])
    assert webhook_deliver_due() == 1
    third = Delivery.objects.filter(consumer="webhook").exclude(pk__in=[first.pk, second.pk]).get()
    assert third.status == "retrying"
    assert DeliveryAttempt.objects.get(delivery=third).next_delay == 90.0
