"""The retry schedule with the specification's real 1 s base delay (the one slow test)."""

import itertools

import pytest

from docplatform.events.models import Delivery
from docplatform.revisions import space_content_update
from tests.conftest import wait_until
from webhooks.models import DeliveryAttempt
from webhooks.services.outcomes import retry_delay

# What a worker adds between "due" and "sent" (claim, sign, connect): generous but bounded.
SLACK = 0.35


@pytest.mark.slow
@pytest.mark.usefixtures("celery_worker")
def test_retries_come_after_1_2_and_4_seconds_within_10_percent(
    receiver, install_webhook, space, webhook_settings
):
    webhook_settings.WEBHOOK_RETRY_BASE_DELAY = 1.0
    receiver.respond(503)
    install_webhook(space=space, url=receiver.url)
    space_content_update(space=space, pages=[{"path": "p", "title": "P"}])
    received = receiver.wait_for(4, timeout=30)
    wait_until(lambda: Delivery.objects.filter(status="failed").exists(), timeout=10)

    gaps = [later.at - earlier.at for earlier, later in itertools.pairwise(received)]
    planned = list(DeliveryAttempt.objects.order_by("number").values_list("next_delay", flat=True))
    assert planned[3] is None  # no retry after the third one
    for gap, planned_delay, base in zip(gaps, planned[:3], [1, 2, 4], strict=True):
        assert 0.9 * base <= planned_delay <= 1.1 * base
        assert planned_delay - 0.05 <= gap <= planned_delay + SLACK
    assert len(receiver.requests) == 4  # 1 attempt + 3 retries, then it stops


def test_the_delay_formula_stays_within_the_jitter_band(settings):
    settings.WEBHOOK_RETRY_BASE_DELAY = 1.0
    for attempt, base in [(1, 1.0), (2, 2.0), (3, 4.0)]:
        delays = [retry_delay(attempt) for _ in range(2000)]
        assert min(delays) >= 0.9 * base and max(delays) <= 1.1 * base
        assert max(delays) - min(delays) > 0.15 * base  # it really jitters
