"""A 429's ``Retry-After`` and the specification's retry schedule: by default the schedule holds
(1, 2, 4 times the base delay, +/-10 %) whatever a 429 says; an endpoint that opted in
(``retry_after``) is retried when its ``Retry-After`` asks, up to ``WEBHOOK_RETRY_AFTER_MAX``.

Real Celery worker, a real local receiver answering 429 with ``Retry-After: 3``. The times
checked are those the delivery log records (each attempt's start and planned delay), with the
suite's small base delay (0.05 s).
"""

import itertools
from datetime import timedelta
from email.utils import format_datetime

import pytest
from django.utils import timezone

from docplatform.events.models import Delivery
from docplatform.revisions import space_content_update
from tests.api_helpers import API, api_client, error_attrs
from tests.conftest import wait_until
from webhooks.models import DeliveryAttempt

pytestmark = pytest.mark.usefixtures("webhook_settings", "celery_worker")

BUSY = (429, {"Retry-After": "3"}, b"")


def fire_and_settle(space) -> list[DeliveryAttempt]:
    space_content_update(space=space, pages=[{"path": "p", "title": "P"}])
    deliveries = Delivery.objects.filter(consumer="webhook")
    wait_until(
        lambda: deliveries.exists() and not deliveries.filter(status__in=["pending", "retrying"]),
        timeout=20,
    )
    return list(DeliveryAttempt.objects.order_by("number"))


def gaps(attempts: list[DeliveryAttempt]) -> list[float]:
    """Seconds between the starts of consecutive attempts, as the delivery log records them."""
    return [
        (later.started_at - earlier.started_at).total_seconds()
        for earlier, later in itertools.pairwise(attempts)
    ]


@pytest.mark.slow
def test_by_default_the_schedule_holds_whatever_retry_after_says(
    receiver, install_webhook, space, webhook_settings
):
    receiver.respond(BUSY)
    installation = install_webhook(space=space, url=receiver.url)
    assert installation.configuration["retry_after"] is False  # the default: off

    attempts = fire_and_settle(space)

    assert [a.status_code for a in attempts] == [429] * 4  # 1 attempt + 3 retries
    assert [a.outcome for a in attempts] == ["retry", "retry", "retry", "failed"]
    base = webhook_settings.WEBHOOK_RETRY_BASE_DELAY
    planned = [a.next_delay for a in attempts]
    assert planned[3] is None
    for planned_delay, factor in zip(planned[:3], [1, 2, 4], strict=True):
        assert 0.9 * base * factor <= planned_delay <= 1.1 * base * factor
    for gap, planned_delay in zip(gaps(attempts), planned[:3], strict=True):
        assert planned_delay - 0.01 <= gap < 3.0  # the schedule's, never the 3 s asked
    assert not any("Retry-After" in a.error for a in attempts)
    (delivery,) = Delivery.objects.filter(consumer="webhook")
    assert (delivery.status, delivery.last_error) == ("failed", "HTTP 429")


@pytest.mark.slow
def test_an_endpoint_that_opted_in_is_retried_when_retry_after_asks(
    receiver, install_webhook, space
):
    receiver.respond(BUSY, 200)
    install_webhook(space=space, url=receiver.url, retry_after=True)

    first, second = fire_and_settle(space)

    assert (first.status_code, first.outcome, first.next_delay) == (429, "retry", 3.0)
    assert first.error == "HTTP 429, held back as the receiver asked: Retry-After 3 s"
    assert (second.status_code, second.outcome) == (200, "succeeded")
    assert gaps([first, second])[0] >= 3.0
    assert len(receiver.requests) == 2


@pytest.mark.slow
def test_an_opted_in_wait_as_an_http_date_is_bounded_by_the_setting(
    receiver, install_webhook, space, webhook_settings
):
    webhook_settings.WEBHOOK_RETRY_AFTER_MAX = 0.5
    later = format_datetime(timezone.now() + timedelta(minutes=10), usegmt=True)
    receiver.respond((429, {"Retry-After": later}, b""), 200)
    install_webhook(space=space, url=receiver.url, retry_after=True)

    first, second = fire_and_settle(space)

    assert (first.status_code, first.next_delay) == (429, 0.5)
    assert "Retry-After 0.5 s" in first.error
    assert second.status_code == 200 and gaps([first, second])[0] >= 0.5


def test_the_opt_in_is_a_boolean_setting(install_webhook, space, org_admin):
    installation = install_webhook(space=space, url="https://example.com/hooks")
    url = f"{API}/installations/{installation.pk}/configuration/"
    client = api_client(org_admin)
    refused = client.patch(url, {"retry_after": "yes"}, format="json")
    assert refused.status_code == 400
    assert error_attrs(refused) == ["configuration.retry_after"]
    installation.refresh_from_db()
    assert installation.configuration["retry_after"] is False
    granted = client.patch(url, {"retry_after": True}, format="json")
    assert granted.status_code == 200
    installation.refresh_from_db()
    assert installation.configuration["retry_after"] is True
