"""The attempt log tells what happened: each attempt's request headers as sent (the signature
included), its outcome (``retry`` while a retry follows, ``failed`` for the last attempt of a
delivery that failed), one row per attempt counted on the delivery.

A real receiver; the drain and the retry tasks run here, where the worker would.
"""

import pytest
from django.utils import timezone
from docplatform_sdk.receiver import verify_signature

from docplatform.events.models import Delivery
from docplatform.revisions import space_content_update
from tests.conftest import wait_until
from webhooks.models import DeliveryAttempt
from webhooks.services.delivery import webhook_deliver_due
from webhooks.services.signing_secrets import signing_secret_current

pytestmark = pytest.mark.usefixtures("transactional_db", "private_broker", "webhook_settings")


def update(space):
    space_content_update(space=space, pages=[{"path": "p", "title": "P"}])


def deliver_with_retries(delivery: Delivery) -> Delivery:
    """The drain's attempt, then each retry's (a drain at its countdown), until the delivery
    is finished."""
    webhook_deliver_due()
    delivery.refresh_from_db()
    while delivery.status == "retrying":
        wait_until(lambda: Delivery.objects.get(pk=delivery.pk).next_attempt_at <= timezone.now())
        webhook_deliver_due()
        delivery.refresh_from_db()
    return delivery


@pytest.mark.slow
def test_the_last_attempt_of_a_failed_delivery_says_failed(receiver, install_webhook, space):
    receiver.respond(500)
    install_webhook(space=space, url=receiver.url)
    update(space)
    delivery = deliver_with_retries(Delivery.objects.get(consumer="webhook"))
    assert (delivery.status, delivery.attempts) == ("failed", 4)
    assert delivery.outcome == "HTTP 500 after the last retry"
    log = list(DeliveryAttempt.objects.filter(delivery=delivery).order_by("number"))
    assert [(a.number, a.status_code, a.outcome) for a in log] == [
        (1, 500, "retry"),
        (2, 500, "retry"),
        (3, 500, "retry"),
        (4, 500, "failed"),
    ]
    assert all(a.next_delay is not None for a in log[:3]) and log[3].next_delay is None


@pytest.mark.slow
@pytest.mark.parametrize(
    ("answers", "outcomes"),
    [
        ([410], ["failed"]),
        ([(301, {"Location": "/elsewhere"}, b"")], ["failed"]),
        ([503, 200], ["retry", "succeeded"]),
    ],
)
def test_each_attempt_has_its_outcome(receiver, install_webhook, space, answers, outcomes):
    receiver.respond(*answers)
    install_webhook(space=space, url=receiver.url)
    update(space)
    delivery = deliver_with_retries(Delivery.objects.get(consumer="webhook"))
    log = DeliveryAttempt.objects.filter(delivery=delivery).order_by("number")
    assert list(log.values_list("outcome", flat=True)) == outcomes
    assert delivery.attempts == len(outcomes)


@pytest.mark.slow
def test_a_refused_url_is_a_failed_attempt_with_its_reason(
    receiver, install_webhook, space, settings
):
    install_webhook(space=space, url=receiver.url)
    settings.WEBHOOK_ALLOWED_NETWORKS = []
    update(space)
    delivery = deliver_with_retries(Delivery.objects.get(consumer="webhook"))
    (attempt,) = DeliveryAttempt.objects.filter(delivery=delivery)
    assert (delivery.status, attempt.outcome, attempt.status_code) == ("failed", "failed", None)
    assert attempt.error == (
        "refused URL: 127.0.0.1 resolves to 127.0.0.1, a loopback address (an operator may allow "
        "its network with WEBHOOK_ALLOWED_NETWORKS)"
    )
    assert attempt.request_headers == {}  # nothing was sent
    assert receiver.requests == []


@pytest.mark.slow
def test_an_attempt_records_the_request_headers_it_sent(receiver, install_webhook, space):
    installation = install_webhook(space=space, url=receiver.url)
    update(space)
    deliver_with_retries(Delivery.objects.get(consumer="webhook"))
    (received,) = receiver.requests
    (attempt,) = DeliveryAttempt.objects.all()
    sent = attempt.request_headers
    for name in ("Content-Type", "User-Agent", "X-Service-Event", "X-Service-Delivery"):
        assert sent[name] == received.headers[name]
    assert sent["Host"] == received.headers["Host"] == f"127.0.0.1:{receiver.server.server_port}"
    assert sent["X-Service-Signature"] == received.headers["X-Service-Signature"]
    verify_signature(
        received.body, sent["X-Service-Signature"], signing_secret_current(installation)
    )
