""" "Resend all failed since ...": the task resumes where it stopped, skips what is no longer
failed, and a broker that is down stops the job at once instead of holding the request."""

import time
from datetime import timedelta

import pytest
from django.conf import settings as django_settings
from django.utils import timezone

from docplatform.events.leases import Result, delivery_claim, delivery_settle
from docplatform.events.models import Delivery
from integrations.operators import OPERATOR
from tests.conftest import broker_unreachable
from webhooks.models import BulkRedelivery
from webhooks.services.ping import webhook_ping_send
from webhooks.services.redelivery import bulk_redelivery_request, bulk_redelivery_run
from webhooks.tasks import disable_failing_endpoints, redeliver_failed

pytestmark = pytest.mark.usefixtures("webhook_settings")


@pytest.fixture
def hook(install_webhook, space, receiver):
    return install_webhook(space=space, url=receiver.url, space_content_updated=True)


def failed_ping(hook) -> Delivery:
    delivery = delivery_claim(webhook_ping_send(user=OPERATOR, installation=hook).pk)
    delivery_settle(delivery, Result.failed(error="HTTP 500", outcome="HTTP 500"))
    return delivery


def test_a_run_resumes_where_it_stopped_and_skips_what_is_no_longer_failed(hook, org_admin):
    failed = [failed_ping(hook) for _ in range(4)]
    job = BulkRedelivery.objects.create(
        installation=hook,
        since=timezone.now() - timedelta(hours=1),
        delivery_ids=[d.pk for d in failed],
        done=1,  # a worker died after the first
        requested_by=org_admin,
    )
    Delivery.objects.filter(pk=failed[1].pk).update(status="succeeded")  # resent meanwhile

    job = bulk_redelivery_run(job.pk)
    assert (job.done, job.skipped, job.total) == (4, 1, 4)
    assert job.finished_at is not None
    statuses = dict(Delivery.objects.filter(pk__in=job.delivery_ids).values_list("pk", "chain"))
    assert statuses == {failed[0].pk: 1, failed[1].pk: 1, failed[2].pk: 2, failed[3].pk: 2}


def test_a_broker_that_is_down_stops_the_job_at_once(
    hook, org_admin, django_capture_on_commit_callbacks
):
    failed_ping(hook)
    started = time.monotonic()
    with broker_unreachable(), django_capture_on_commit_callbacks(execute=True):
        job = bulk_redelivery_request(
            user=org_admin, installation=hook, since=timezone.now() - timedelta(hours=1)
        )
    assert time.monotonic() - started < 5
    job.refresh_from_db()
    assert job.finished_at is not None and job.done == 0
    # Not blocked: asking again is possible at once.
    with django_capture_on_commit_callbacks():
        again = bulk_redelivery_request(
            user=org_admin, installation=hook, since=timezone.now() - timedelta(hours=1)
        )
    assert again.pk != job.pk


def test_the_tasks_are_registered_and_the_check_is_periodic():
    assert redeliver_failed.name == "webhooks.tasks.redeliver_failed"
    schedule = django_settings.CELERY_BEAT_SCHEDULE["disable-failing-webhook-endpoints"]
    assert schedule["task"] == disable_failing_endpoints.name
    assert schedule["schedule"] == 3600.0
