""" "Sync now": the space's current revision written to its branch, one commit per sync."""

import socket
import time

import pytest
import yaml

from docplatform.gitsync.models import GitSync
from docplatform.gitsync.repository import PushRejected, Remote, fetched
from docplatform.gitsync.runs import git_sync_run
from docplatform.gitsync.services import git_connection_set, git_sync_request
from docplatform.revisions import space_content_update
from tests.docplatform.gitsync.conftest import clone, git, sync_events

pytestmark = pytest.mark.django_db


def branch_files(remote, branch="main") -> list[str]:
    return git("--git-dir", remote, "ls-tree", "-r", "--name-only", branch).split()


def commits(remote, branch="main") -> list[str]:
    return git("--git-dir", remote, "log", "--format=%H", branch).split()


def front_matter_and_body(remote, path) -> tuple[dict, str]:
    text = git("--git-dir", remote, "show", f"main:{path}")
    _, front, body = text.split("---\n", 2)
    return yaml.safe_load(front), body


@pytest.mark.slow
def test_sync_now_writes_each_page_as_markdown_in_one_commit(connected, space, remote, run_sync):
    sync = run_sync(space)

    assert sync.status == "success", sync.reason
    revision = space.current_revision
    assert sync.revision == revision
    assert commits(remote) == [sync.commit]  # the branch was created, with one commit
    assert branch_files(remote) == ["guide.md", "guide/install.md", "intro.md"]
    assert front_matter_and_body(remote, "guide.md") == (
        {"title": "Guide: the basics"},
        "Read **this**.",
    )
    assert front_matter_and_body(remote, "intro.md") == (
        {"title": "Intro"},
        "# Welcome\n\nHello.\n",
    )
    message = git("--git-dir", remote, "log", "-1", "--format=%B", "main")
    assert f"(revision {revision.pk})" in message.splitlines()[0]
    assert message.startswith("First pages")
    assert sync_events(space) == [
        (
            "space_gitsync_started",
            {
                "spaceId": space.pk,
                "status": "running",
                "syncId": str(sync.pk),
                "direction": "export",
            },
        ),
        (
            "space_gitsync_completed",
            {
                "spaceId": space.pk,
                "revisionId": revision.pk,
                "status": "success",
                "syncId": str(sync.pk),
                "direction": "export",
                "commit": sync.commit,
            },
        ),
    ]


@pytest.mark.slow
def test_nothing_changed_makes_no_empty_commit(connected, space, remote, run_sync):
    first = run_sync(space)
    again = run_sync(space)
    assert again.status == "success"
    assert again.commit == first.commit
    assert commits(remote) == [first.commit]


@pytest.mark.slow
def test_removed_pages_are_deleted_and_other_files_kept(
    connected, space, remote, run_sync, tmp_path, org_admin
):
    run_sync(space)
    work = clone(remote, tmp_path / "work")
    (tmp_path / "work" / "notes.txt").write_text("not a page\n")
    (tmp_path / "work" / ".github").mkdir()
    (tmp_path / "work" / ".github" / "TEMPLATE.md").write_text("not a page path either\n")
    git("add", "-A", cwd=work)
    git("commit", "--quiet", "-m", "Their files", cwd=work)
    git("push", "--quiet", "origin", "main", cwd=work)
    space_content_update(
        space=space,
        pages=[{"path": "intro", "title": "Intro", "body": "Only this now.\n"}],
        message="Trim",
        author=org_admin,
    )

    sync = run_sync(space)

    assert sync.status == "success", sync.reason
    assert branch_files(remote) == [".github/TEMPLATE.md", "intro.md", "notes.txt"]
    history = commits(remote)
    assert len(history) == 3 and history[0] == sync.commit  # on top of their commit


def test_every_new_revision_is_written_when_the_connection_says_so(
    connected, space, remote, org_admin, django_capture_on_commit_callbacks
):
    git_connection_set(space=space, url=remote, branch="main", sync_on_revision=True)
    with django_capture_on_commit_callbacks(execute=False) as queued:
        space_content_update(
            space=space, pages=[{"path": "a", "title": "A"}], message="One", author=org_admin
        )
        space_content_update(
            space=space, pages=[{"path": "b", "title": "B"}], message="Two", author=org_admin
        )
    waiting = GitSync.objects.get(space=space)  # one export waits for both: it writes "Two"
    assert (waiting.direction, waiting.status, waiting.trigger) == ("export", "queued", "revision")
    assert len(queued) == 1
    with django_capture_on_commit_callbacks(execute=False) as queued:
        space_content_update(space=space, pages=[{"path": "c", "title": "C"}], git_commit="f" * 40)
    assert GitSync.objects.filter(space=space).count() == 1  # an import is not written back
    assert queued == []


@pytest.mark.slow
def test_an_unreachable_repository_fails_with_the_reason(space, git_root, org_admin, run_sync):
    git_connection_set(space=space, url=str(git_root / "missing.git"), branch="main")

    sync = run_sync(space)

    assert sync.status == "failed"
    assert sync.reason == "repository unreachable: no Git repository at this address"
    assert sync.finished_at is not None
    [started, completed] = sync_events(space)
    assert started[1]["status"] == "running"
    assert completed == (
        "space_gitsync_completed",
        {
            "spaceId": space.pk,
            "revisionId": space.current_revision_id,
            "status": "failed",
            "syncId": str(sync.pk),
            "direction": "export",
            "reason": sync.reason,
        },
    )


def test_an_address_refused_since_it_was_saved_is_not_used(connected, space, run_sync, settings):
    settings.GIT_SYNC_ALLOWED = ["https://git.example.com/*"]
    sync = run_sync(space)
    assert sync.status == "failed"
    assert sync.reason.startswith("refused address: not an address this platform may sync")
    assert sync_events(space)[-1][1]["status"] == "failed"


def test_a_push_racing_another_is_rejected_not_forced(remote, tmp_path):
    """The commit is made on the head as fetched and pushed only if the branch is still
    there: a client that pushed meanwhile keeps its commit."""
    work = tmp_path / "work"
    git("init", "--quiet", "--initial-branch=main", str(work))
    (work / "theirs.md").write_text("theirs\n")
    git("add", "-A", cwd=work)
    git("commit", "--quiet", "-m", "Theirs", cwd=work)
    git("push", "--quiet", remote, "main", cwd=work)
    with fetched(Remote(url=remote, branch="main", timeout=5)) as branch:
        (work / "theirs.md").write_text("theirs, again\n")
        git("commit", "--quiet", "-am", "Theirs again", cwd=work)
        git("push", "--quiet", remote, "main", cwd=work)
        with pytest.raises(PushRejected, match="someone pushed to the branch"):
            branch.commit_files(
                {"a.md": b"mine"}, lambda path: True, message="m", identity="a <b@c>"
            )
    assert git("--git-dir", remote, "log", "-1", "--format=%s", "main").strip() == "Theirs again"


@pytest.mark.slow
def test_an_export_writes_the_revision_current_when_it_runs(
    connected, space, remote, org_admin, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=False):
        sync = git_sync_request(space=space, direction="export", requested_by=org_admin)
    later = space_content_update(space=space, pages=[{"path": "late", "title": "Late"}])
    git_sync_run(sync.pk)
    sync.refresh_from_db()
    assert sync.revision == later
    assert branch_files(remote) == ["late.md"]


@pytest.mark.slow
def test_a_server_that_never_answers_fails_the_sync_in_time(space, run_sync, settings):
    with socket.create_server(("127.0.0.1", 0)) as server:  # takes connections, never answers
        url = f"https://127.0.0.1:{server.getsockname()[1]}/docs.git"
        settings.GIT_SYNC_ALLOWED = [url]
        settings.GIT_SYNC_ALLOWED_NETWORKS = ["127.0.0.0/8"]
        settings.GIT_SYNC_TIMEOUT_SECONDS = 1
        git_connection_set(
            space=space, url=url, credentials={"username": "bot", "password": "s3cr3t"}
        )
        started = time.monotonic()
        sync = run_sync(space)
    assert time.monotonic() - started < 5
    assert sync.status == "failed"
    assert sync.reason.startswith("repository unreachable:") and "timed out" in sync.reason
    assert "s3cr3t" not in sync.reason
