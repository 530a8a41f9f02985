"""Writes of Git sync: connecting a space to a branch and asking for a sync. A sync is a row
first (``queued``), run by a task after commit (``runs.git_sync_run``)."""

import logging

from django.core.exceptions import ValidationError
from django.db import transaction
from django.utils import timezone

from ..events.publisher import BrokerUnavailable, publish
from ..models import Space
from .addresses import address_problem, branch_problem
from .models import GitConnection, GitSync
from .runs import git_syncs_fail_stale

logger = logging.getLogger(__name__)
RUN_TASK = "docplatform.tasks.run_git_sync"
#: How long a sync waits for the one running in its space before trying again (seconds).
WAIT_SECONDS = 2.0
MAX_USERNAME_LENGTH = 200
MAX_PASSWORD_LENGTH = 4000


class NotConnected(Exception):
    """The space is not connected to a repository."""

    def __init__(self):
        super().__init__("the space is not connected to a Git repository: connect it first")


# --- The connection ----------------------------------------------------------------------------


def git_connection_set(
    *,
    space: Space,
    url: str,
    branch: str = "main",
    sync_on_revision: bool = False,
    credentials: dict | None = None,
    user=None,
) -> GitConnection:
    """Connect ``space`` to a repository's branch, or change its connection. ``credentials``
    ({"username", "password"}, for an https:// address): ``{}`` for none, None to keep those
    saved (dropped when the address changes, so they never go to another server). Raises
    ValidationError naming ``url``, ``branch`` or ``credentials.*``; saves nothing then."""
    url = url.strip() if isinstance(url, str) else url
    branch = branch.strip() if isinstance(branch, str) else branch
    errors = {}
    if problem := address_problem(url):
        errors["url"] = [problem]
    if problem := branch_problem(branch):
        errors["branch"] = [problem]
    if credentials:
        errors |= _credentials_problems(url, credentials)
    if errors:
        raise ValidationError(errors)
    with transaction.atomic():
        connection = (
            GitConnection.objects.select_for_update(no_key=True).filter(space=space).first()
        )
        if connection is None:
            connection = GitConnection(space=space, created_by=user, credentials={})
        if credentials is not None:
            connection.credentials = (
                {"username": credentials["username"], "password": credentials["password"]}
                if credentials
                else {}
            )
        elif connection.url != url:
            connection.credentials = {}
        connection.url, connection.branch = url, branch
        connection.sync_on_revision = bool(sync_on_revision)
        connection.save()
    return connection


def _credentials_problems(url, credentials: dict) -> dict:
    if not isinstance(url, str) or not url.startswith("https://"):
        return {
            "credentials": [
                "only an https:// address takes credentials (an ssh:// address uses the "
                "worker's SSH keys, a local path none)"
            ]
        }
    errors = {}
    username, password = credentials.get("username"), credentials.get("password")
    if not isinstance(username, str) or not username.strip():
        errors["credentials.username"] = ["is required with a password or token"]
    elif len(username) > MAX_USERNAME_LENGTH or ":" in username or not username.isprintable():
        errors["credentials.username"] = [
            f"at most {MAX_USERNAME_LENGTH} printable characters, no ':'"
        ]
    if not isinstance(password, str) or not password:
        errors["credentials.password"] = ["give the password or token"]
    elif len(password) > MAX_PASSWORD_LENGTH or not password.isprintable():
        errors["credentials.password"] = [f"at most {MAX_PASSWORD_LENGTH} printable characters"]
    return errors


def git_connection_remove(*, space: Space) -> bool:
    """Disconnect the space (its syncs' history stays); whether it was connected."""
    deleted, _ = GitConnection.objects.filter(space=space).delete()
    return bool(deleted)


# --- Asking for a sync -------------------------------------------------------------------------


def git_sync_request(
    *, space: Space, direction: str, requested_by=None, trigger: str = "manual"
) -> GitSync:
    """Queue a sync of the space (``export``: write its current revision to the branch;
    ``import``: make a revision from the branch), run by a task after commit. A sync of the
    same direction still waiting to start is answered instead of queueing another: it will
    read the space and the branch when it starts. Raises NotConnected."""
    if direction not in GitSync.Direction.values:
        raise ValidationError({"direction": [f"one of {', '.join(GitSync.Direction.values)}"]})
    with transaction.atomic():
        Space.objects.select_for_update(no_key=True).filter(
            pk=space.pk
        ).first()  # one request at a time
        connection = GitConnection.objects.filter(space=space).first()
        if connection is None:
            raise NotConnected()
        git_syncs_fail_stale(space=space)
        waiting = GitSync.objects.filter(
            space=space, direction=direction, status=GitSync.Status.QUEUED
        ).first()
        if waiting is not None:
            return waiting
        sync = GitSync.objects.create(
            space=space,
            direction=direction,
            trigger=trigger,
            url=connection.url,
            branch=connection.branch,
            requested_by=requested_by,
        )
        transaction.on_commit(lambda: git_sync_queue(sync.pk))
    return sync


def git_sync_on_revision(*, space: Space, author=None) -> GitSync | None:
    """A new revision of the space: queue an export when its connection says so
    ("sync every new revision"). A revision hook (``hooks.on_revision_written``, registered
    by ``DocplatformConfig.ready``): ``space_content_update`` calls it in its transaction."""
    if not GitConnection.objects.filter(space=space, sync_on_revision=True).exists():
        return None
    return git_sync_request(
        space=space, direction=GitSync.Direction.EXPORT, requested_by=author, trigger="revision"
    )


def git_sync_queue(sync_id: int, *, countdown: float | None = None) -> None:
    """Send the sync's task (bounded in time, ``events.publisher``); a broker that is down
    fails the sync at once (the page says to ask again), never holding the request."""
    try:
        publish(RUN_TASK, args=[sync_id], countdown=countdown)
    except BrokerUnavailable:
        logger.warning("broker unavailable: Git sync %s is not queued", sync_id, exc_info=True)
        GitSync.objects.filter(pk=sync_id, status=GitSync.Status.QUEUED).update(
            status=GitSync.Status.FAILED,
            reason="the task queue is unavailable: ask again in a moment",
            finished_at=timezone.now(),
        )
