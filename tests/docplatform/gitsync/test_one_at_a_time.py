"""Two syncs of one space never run at once; a sync whose worker was lost does not hold the
space's turn; a broker that is down fails the sync at once."""

from datetime import timedelta

import pytest
from django.db import IntegrityError, transaction
from django.utils import timezone

from docplatform.gitsync.models import GitSync
from docplatform.gitsync.runs import git_sync_run, git_syncs_fail_stale
from docplatform.gitsync.services import git_sync_request
from tests.conftest import broker_unreachable
from tests.docplatform.gitsync.conftest import sync_events

pytestmark = pytest.mark.django_db


def running_sync(space, *, started_ago=timedelta(0)) -> GitSync:
    """A sync another worker is running (it started ``started_ago``)."""
    return GitSync.objects.create(
        space=space,
        direction="import",
        status="running",
        url="-",
        branch="main",
        started_at=timezone.now() - started_ago,
    )


@pytest.mark.slow
def test_a_second_sync_waits_while_one_runs(
    space, connected, org_admin, django_capture_on_commit_callbacks
):
    other = running_sync(space)
    with django_capture_on_commit_callbacks(execute=False):
        sync = git_sync_request(space=space, direction="export", requested_by=org_admin)

    assert git_sync_run(sync.pk).status == "queued"  # the task tries again a moment later
    assert sync_events(space) == []

    GitSync.objects.filter(pk=other.pk).update(status="success", finished_at=timezone.now())
    assert git_sync_run(sync.pk).status == "success"
    assert [kind for kind, _ in sync_events(space)] == [
        "space_gitsync_started",
        "space_gitsync_completed",
    ]


def test_the_database_refuses_two_running_syncs_of_a_space(space, connected):
    running_sync(space)
    with pytest.raises(IntegrityError), transaction.atomic():
        running_sync(space)


@pytest.mark.slow
def test_a_task_delivered_twice_runs_the_sync_once(space, connected, run_sync):
    sync = run_sync(space)
    assert git_sync_run(sync.pk).status == "success"
    assert len(sync_events(space)) == 2


@pytest.mark.slow
def test_a_sync_whose_worker_was_lost_is_failed_and_frees_the_space(
    space, connected, run_sync, settings
):
    settings.GIT_SYNC_MAX_SECONDS = 60
    lost = running_sync(space, started_ago=timedelta(minutes=5))
    never_started = GitSync.objects.create(space=space, direction="export", url="-", branch="m")
    GitSync.objects.filter(pk=never_started.pk).update(
        created_at=timezone.now() - timedelta(minutes=5)
    )

    sync = run_sync(space)  # fails the lost ones first, then runs

    assert sync.status == "success", sync.reason
    lost.refresh_from_db()
    never_started.refresh_from_db()
    assert (lost.status, lost.reason) == (
        "failed",
        "no end recorded after 60 s: its worker was lost",
    )
    assert never_started.status == "failed"
    assert never_started.reason == "no worker started it within 60 s"
    completed = [payload for kind, payload in sync_events(space) if kind.endswith("completed")]
    assert [(payload["syncId"], payload["status"]) for payload in completed] == [
        (str(lost.pk), "failed"),
        (str(sync.pk), "success"),
    ]
    assert git_syncs_fail_stale() == 0


def test_a_broker_that_is_down_fails_the_sync_at_once(
    space, connected, org_admin, django_capture_on_commit_callbacks
):
    with broker_unreachable(), django_capture_on_commit_callbacks(execute=True):
        sync = git_sync_request(space=space, direction="export", requested_by=org_admin)
    sync.refresh_from_db()
    assert sync.status == "failed"
    assert sync.reason == "the task queue is unavailable: ask again in a moment"
    with django_capture_on_commit_callbacks(execute=False):
        again = git_sync_request(space=space, direction="export", requested_by=org_admin)
    assert again.pk != sync.pk  # not blocked: asking again queues a new one
