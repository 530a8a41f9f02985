"""Git sync against real repositories in a temporary folder: bare repositories made with the
``git`` command, which also plays "another client" (a clone, an edit, a push). The product
itself uses dulwich only."""

import os
import subprocess

import pytest

from docplatform.events.models import Event
from docplatform.gitsync.runs import git_sync_run
from docplatform.gitsync.services import git_connection_set, git_sync_request

GIT_ENV = {
    "GIT_AUTHOR_NAME": "Another Client",
    "GIT_AUTHOR_EMAIL": "other@example.com",
    "GIT_COMMITTER_NAME": "Another Client",
    "GIT_COMMITTER_EMAIL": "other@example.com",
    "GIT_CONFIG_NOSYSTEM": "1",
    "HOME": "/nonexistent",
}


def git(*args, cwd=None) -> str:
    """Run the git command (an argument list, never a shell string); its output."""
    result = subprocess.run(
        ["git", *args],
        cwd=cwd,
        env={**os.environ, **GIT_ENV},
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    )
    return result.stdout


@pytest.fixture
def git_root(tmp_path, settings):
    """The folder whose repositories Git sync may use (GIT_SYNC_ALLOWED)."""
    root = tmp_path / "git"
    root.mkdir()
    settings.GIT_SYNC_ALLOWED = [f"{root}/*"]
    return root


@pytest.fixture
def remote(git_root):
    """An empty bare repository: its address."""
    path = git_root / "docs.git"
    git("init", "--quiet", "--bare", "--initial-branch=main", str(path))
    return str(path)


@pytest.fixture
def space_spec(org_admin):
    return {
        "title": "Handbook",
        "pages": [
            {"path": "intro", "title": "Intro", "body": "# Welcome\n\nHello.\n"},
            {"path": "guide", "title": "Guide: the basics", "body": "Read **this**."},
            {"path": "guide/install", "title": "Install", "body": "Run it.\n"},
        ],
        "message": "First pages",
        "author": org_admin,
    }


@pytest.fixture
def connected(space, remote, org_admin):
    """The space connected to ``remote``'s main branch."""
    return git_connection_set(space=space, url=remote, branch="main", user=org_admin)


@pytest.fixture
def run_sync(org_admin, django_capture_on_commit_callbacks):
    """Ask for a sync and run it here, as the task would (the task itself is not sent)."""

    def run(space, direction="export"):
        with django_capture_on_commit_callbacks(execute=False):
            sync = git_sync_request(space=space, direction=direction, requested_by=org_admin)
        git_sync_run(sync.pk)
        sync.refresh_from_db()
        return sync

    return run


def sync_events(space) -> list[tuple[str, dict]]:
    """The space's Git sync events, in the order they were fired."""
    fired = Event.objects.filter(space=space, type__startswith="space_gitsync_")
    return [(event.type, event.payload) for event in fired.order_by("created_at", "id")]


def clone(remote, folder) -> str:
    """A working copy of ``remote`` made by another client."""
    git("clone", "--quiet", remote, str(folder))
    return str(folder)
