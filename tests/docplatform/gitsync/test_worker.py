"""Git sync through the real task on a real Celery worker (the configured broker)."""

import pytest

from docplatform.gitsync.models import GitSync
from tests.api_helpers import API, api_client
from tests.conftest import wait_until
from tests.docplatform.gitsync.conftest import git, sync_events

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.mark.slow
@pytest.mark.usefixtures("celery_worker")
def test_syncs_run_on_a_worker_one_at_a_time(space, connected, remote, org_admin):
    admin = api_client(org_admin)
    finished = GitSync.objects.filter(status__in=GitSync.FINISHED)
    first = admin.post(f"{API}/spaces/{space.pk}/git/sync/").json()
    wait_until(lambda: finished.count() == 1, timeout=30)
    written = GitSync.objects.get(pk=first["id"])
    assert written.status == "success", written.reason
    assert git("--git-dir", remote, "rev-parse", "main").strip() == written.commit

    # Both at once: the worker's threads take them together, the second waits its turn.
    ids = [
        admin.post(f"{API}/spaces/{space.pk}/git/{action}/").json()["id"]
        for action in ("sync", "import")
    ]
    wait_until(lambda: finished.count() == 3, timeout=30)

    syncs = sorted(GitSync.objects.filter(pk__in=ids), key=lambda sync: sync.started_at)
    assert [sync.status for sync in syncs] == ["success", "success"], [s.reason for s in syncs]
    assert syncs[0].finished_at <= syncs[1].started_at  # never at once
    assert {sync.commit for sync in syncs} == {written.commit}  # nothing changed either way
    kinds = [kind.removeprefix("space_gitsync_") for kind, _ in sync_events(space)]
    assert kinds == ["started", "completed"] * 3
