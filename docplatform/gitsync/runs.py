"""Running a Git sync (the task's work), and failing the syncs whose worker was lost.

Both ways, a sync merges: the commit of the last sync that succeeded
(``GitConnection.synced_commit``) is the base, and what the branch changed since and what the
space changed since are merged page by page and line by line (``merging``); what
does not overlap is written to both, in this one sync; what overlaps is written to neither,
and the sync fails with ``conflict`` naming the pages (``GitSync.conflicts``).

Starting a sync marks it ``running`` and fires ``space_gitsync_started`` in one transaction;
the database lets one sync per space be ``running`` (a partial unique constraint), so a
second one waits for its turn (the task tries again a moment later). Its end, the revision an
import makes and ``space_gitsync_completed`` are written in one transaction too: an import is
written whole or not at all.
"""

import logging
from dataclasses import asdict, dataclass
from datetime import timedelta

from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import IntegrityError, transaction
from django.utils import timezone

from .. import events, hooks
from ..content import MAX_MESSAGE_LENGTH, page_limit_error
from ..merging import merge_pages
from ..models import Space
from ..page_versions import page_dicts
from ..revisions import RevisionConflict, space_content_update
from .addresses import address_problem
from .confined import WorkFailed, repository_work
from .files import page_path_of
from .models import GitConnection, GitSync
from .repository import Remote

logger = logging.getLogger(__name__)


class SyncFailed(Exception):
    """Why a sync failed, in words for its history and ``space_gitsync_completed``."""


@dataclass
class Found:
    """What an import read from the branch: the pages to write (None: as the space is)."""

    pages: list[dict] | None
    based_on: str | None
    message: str


def git_sync_run(sync_id: int) -> GitSync | None:
    """Run a queued sync (the task's work) and record how it ended. Answers the sync: still
    ``queued`` when another sync of its space is running (the task tries again later), as it
    was when it is not queued any more (a task delivered twice runs it once)."""
    sync = GitSync.objects.select_related("space__organization").filter(pk=sync_id).first()
    if sync is None or sync.status != GitSync.Status.QUEUED:
        return sync
    git_syncs_fail_stale(space=sync.space)
    if not _start(sync):
        sync.refresh_from_db()
        return sync
    found = None
    try:
        remote, connection = _remote(sync)
        if sync.direction == GitSync.Direction.EXPORT:
            found = _export(sync, remote, connection)
        else:
            found = _import(sync, remote, connection)
        sync.status = GitSync.Status.SUCCESS
    except SyncFailed as failure:
        sync.status, sync.reason = GitSync.Status.FAILED, str(failure)
    except Exception as error:
        logger.exception("Git sync %s stopped on an unexpected error", sync.pk)
        sync.status = GitSync.Status.FAILED
        sync.reason = f"stopped on an unexpected error ({type(error).__name__}); it is logged"
    _finish(sync, found)
    return sync


def _start(sync: GitSync) -> bool:
    """Mark the sync running and fire ``space_gitsync_started``; False when another sync of
    the space is running (or this one is not queued any more)."""
    try:
        with transaction.atomic():
            started_at = timezone.now()
            started = GitSync.objects.filter(pk=sync.pk, status=GitSync.Status.QUEUED).update(
                status=GitSync.Status.RUNNING, started_at=started_at
            )
            if not started:
                return False
            sync.status, sync.started_at = GitSync.Status.RUNNING, started_at
            _fire_started(sync)
    except IntegrityError:  # one_running_git_sync_per_space
        return False
    return True


def _remote(sync: GitSync) -> tuple[Remote, GitConnection]:
    """The repository as the space's connection names it now (checked again: the operator
    may have changed GIT_SYNC_ALLOWED since it was saved)."""
    connection = GitConnection.objects.filter(space=sync.space_id).first()
    if connection is None:
        raise SyncFailed("the space is no longer connected to a Git repository")
    sync.url, sync.branch = connection.url, connection.branch
    problem = address_problem(connection.url)
    if problem:
        raise SyncFailed(f"refused address: {problem}")
    credentials = connection.credentials or {}
    remote = Remote(
        url=connection.url,
        branch=connection.branch,
        timeout=settings.GIT_SYNC_TIMEOUT_SECONDS,
        username=credentials.get("username", ""),
        password=credentials.get("password", ""),
    )
    return remote, connection


def _export(sync: GitSync, remote: Remote, connection: GitConnection) -> Found | None:
    """Write the space's current revision to the branch in one commit on top of its head
    (none when the branch holds these pages already). When the branch moved since the last
    sync, its changes and the space's are merged first (``_merged``): the merge is committed
    and imported into the space in this same sync."""
    space = Space.objects.select_related("current_revision").get(pk=sync.space_id)
    revision = space.current_revision
    if revision is None:
        raise SyncFailed("the space has no pages yet: nothing to write")
    sync.revision = revision
    mine = page_dicts(revision.pk)
    read = _read(remote, connection, missing_ok=True)
    head = read["head"]
    sync.commit = head or ""  # what was read; the commit written replaces it
    message = f"{revision.message or 'Update the pages'} (revision {revision.pk})\n\n"
    message += f"Written by docplatform from the space {space.title!r} ({space.pk}).\n"
    moved = head and connection.synced_commit and head != connection.synced_commit
    pages = _merged(sync, read, branch=read["pages"], space=mine, base=read) if moved else mine
    written = _work(
        {"direction": "export", "remote": asdict(remote), "pages": pages, "message": message}
        | {"expectedHead": head or ""}
    )
    sync.commit = written["commit"]
    if pages == mine:
        return None
    return Found(
        pages=pages,
        based_on=revision.pk,
        message=f"Merged from Git: {remote.branch} at {head[:12]}"[:MAX_MESSAGE_LENGTH],
    )


def _import(sync: GitSync, remote: Remote, connection: GitConnection) -> Found:
    """Read the branch's Markdown files as pages. Since the last sync, what the branch changed
    and what the space changed are merged (``_merged``); without one, the branch's pages:
    the space's pages in their order, those added in Git after them by path; a skipped file's
    page (when the space has it) as it is."""
    read = _read(remote, connection)
    sync.commit, sync.skipped = read["head"], read["skipped"]
    based_on = Space.objects.values_list("current_revision_id", flat=True).get(pk=sync.space_id)
    current = page_dicts(based_on) if based_on else []
    if read["basePages"] is not None and read["head"] != connection.synced_commit:
        merged = _merged(sync, read, branch=read["pages"], space=current, base=read)
    else:
        merged = _branch_pages(read, current)
    if not merged:
        raise SyncFailed("the branch holds no Markdown page to import")
    if len(merged) > settings.SPACE_MAX_PAGES:
        raise SyncFailed(f"the branch holds {len(merged)} pages; {page_limit_error()}")
    message = f"Imported from Git: {remote.branch} at {sync.commit[:12]}"
    message = f"{message} ({read['subject']})" if read["subject"] else message
    return Found(
        pages=None if merged == current else merged,
        based_on=based_on,
        message=message[:MAX_MESSAGE_LENGTH],
    )


def _read(remote: Remote, connection: GitConnection, *, missing_ok: bool = False) -> dict:
    """The branch's pages now and at the last synced commit (``basePages``)."""
    request = {"direction": "import", "remote": asdict(remote)}
    try:
        return _work(request | {"baseCommit": connection.synced_commit})
    except SyncFailed as failure:
        if missing_ok and "does not exist in the repository" in str(failure):
            return {"head": None, "pages": [], "skipped": [], "basePages": None, "subject": ""}
        raise


def _branch_pages(read: dict, current: list[dict]) -> list[dict]:
    pages = {page["path"]: page for page in read["pages"]}
    kept = {page_path_of(skip["path"]) for skip in read["skipped"]}
    merged = [
        pages.pop(page["path"], page)
        for page in current
        if page["path"] in pages or page["path"] in kept
    ]
    return merged + sorted(pages.values(), key=lambda page: page["path"])


def _merged(sync: GitSync, read: dict, *, branch, space, base) -> list[dict]:
    """The branch's and the space's changes since the last synced commit, merged page by page
    and line by line (``merging``). A file the branch holds but that was skipped
    counts as unchanged there. Overlaps write nothing anywhere: the sync fails with
    ``conflict`` naming the pages."""
    base_pages = read["basePages"]
    if base_pages is None:
        raise SyncFailed(
            "conflict: the branch no longer holds the last synced commit (it was rewritten): "
            "import it to start again from the branch, or export to start from the space"
        )
    unreadable = {page_path_of(skip["path"]) for skip in read["skipped"]}
    branch = branch + [page for page in base_pages if page["path"] in unreadable]
    merged, clashes = merge_pages(base_pages, branch, space, theirs_unordered=True)
    sync.merged = True
    if clashes:
        sync.conflicts = [clash.as_json() for clash in clashes]
        # Opened as a change request when the sync ends, in the space's order of pages.
        order = {page["path"]: index for index, page in enumerate(space)}
        sync.branch_side = sorted(
            branch, key=lambda p: (order.get(p["path"], len(order)), p["path"])
        )
        names = ", ".join(clash.path for clash in clashes)
        raise SyncFailed(
            f"conflict: the branch and the space both changed {names} where the changes "
            "overlap; nothing was written in either"
        )
    return merged


def _work(request: dict) -> dict:
    """The repository's part of a sync, in its own limited process (``confined``)."""
    request["allowedNetworks"] = settings.GIT_SYNC_ALLOWED_NETWORKS
    request["maxPages"] = settings.SPACE_MAX_PAGES
    try:
        answer = repository_work(request)
    except WorkFailed as failure:
        raise SyncFailed(str(failure)) from failure
    if "failed" in answer:
        raise SyncFailed(answer["failed"])
    return answer


def _finish(sync: GitSync, found: Found | None) -> None:
    """Record the sync's end, the revision an import makes, and fire
    ``space_gitsync_completed``, in one transaction; nothing when the sync was declared
    lost meanwhile (``git_syncs_fail_stale``)."""
    with transaction.atomic():
        if (
            not GitSync.objects.select_for_update(no_key=True)
            .filter(pk=sync.pk, status=GitSync.Status.RUNNING)
            .exists()
        ):
            return
        if found is not None and found.pages is not None and sync.status == GitSync.Status.SUCCESS:
            try:
                sync.revision = space_content_update(
                    space=sync.space,
                    pages=found.pages,
                    message=found.message,
                    author=sync.requested_by,
                    based_on=found.based_on,
                    git_commit=sync.commit,
                )
            except RevisionConflict:
                sync.status = GitSync.Status.FAILED
                sync.reason = "the space changed while the branch was read: import again"
            except ValidationError as error:
                sync.status = GitSync.Status.FAILED
                sync.reason = "the pages cannot be written: " + "; ".join(
                    f"{name}: {' '.join(messages)}" for name, messages in error.message_dict.items()
                )
        sync.finished_at = timezone.now()
        sync.save(
            update_fields=[
                "status",
                "reason",
                "commit",
                "skipped",
                "revision",
                "url",
                "branch",
                "merged",
                "conflicts",
                "finished_at",
            ]
        )
        if sync.conflicts and getattr(sync, "branch_side", None) is not None:
            sync.change_request = _branch_side_change_request(sync)
            sync.save(update_fields=["change_request"])
        if sync.status == GitSync.Status.SUCCESS and sync.commit:
            # The branch and the space agree at this commit: the base of the next merge.
            GitConnection.objects.filter(space=sync.space_id).update(synced_commit=sync.commit)
        _fire_completed(sync)


def _branch_side_change_request(sync: GitSync):
    """A conflict's change request: the branch's pages, made from the space's revision of the
    last sync that succeeded (so merging it is the same three-way merge, resolved by a person
    in the change request, never in the space)."""
    last = (
        GitSync.objects.filter(
            space=sync.space_id, status=GitSync.Status.SUCCESS, revision__isnull=False
        )
        .order_by("-finished_at", "-id")
        .values_list("revision_id", flat=True)
        .first()
    )
    return hooks.pages_propose(
        space=sync.space,
        subject=f"Resolve the Git sync's conflict with {sync.branch} at {sync.commit[:12]}",
        description=(
            "The branch and the space both changed these pages where the changes overlap: "
            + ", ".join(clash["page"] for clash in sync.conflicts)
            + ". This change request holds the branch's side; update it from the space, "
            "resolve each overlap, merge it, then sync again."
        ),
        actor=sync.requested_by,
        based_on=last,
        pages=sync.branch_side,
        message=f"The branch {sync.branch} at {sync.commit[:12]}",
    )


def git_syncs_fail_stale(*, space: Space | None = None) -> int:
    """Fail the syncs (of ``space``, or every space's) running or waiting for longer than
    ``GIT_SYNC_MAX_SECONDS``: their worker was lost, and they must not hold the space's turn.
    A running one fires ``space_gitsync_completed`` (failed). How many were failed."""
    now = timezone.now()
    limit = settings.GIT_SYNC_MAX_SECONDS
    syncs = GitSync.objects.filter(space=space) if space is not None else GitSync.objects.all()
    stale = syncs.filter(
        status=GitSync.Status.RUNNING, started_at__lt=now - timedelta(seconds=limit)
    )
    failed = 0
    for sync in stale.select_related("space__organization"):
        reason = f"no end recorded after {limit} s: its worker was lost"
        with transaction.atomic():
            if GitSync.objects.filter(pk=sync.pk, status=GitSync.Status.RUNNING).update(
                status=GitSync.Status.FAILED, reason=reason, finished_at=now
            ):
                sync.status, sync.reason = GitSync.Status.FAILED, reason
                _fire_completed(sync)
                failed += 1
    failed += syncs.filter(
        status=GitSync.Status.QUEUED, created_at__lt=now - timedelta(seconds=limit)
    ).update(
        status=GitSync.Status.FAILED,
        reason=f"no worker started it within {limit} s",
        finished_at=now,
    )
    return failed


# --- Events ------------------------------------------------------------------------------------


def _fire_started(sync: GitSync) -> None:
    events.fire(
        "space_gitsync_started",
        organization=sync.space.organization,
        space=sync.space,
        spaceId=sync.space_id,
        status=GitSync.Status.RUNNING.value,
        syncId=str(sync.pk),
        direction=sync.direction,
    )


def _fire_completed(sync: GitSync) -> None:
    """``revisionId``: the revision written (export) or made (import); the space's current
    one when nothing was written or made (unchanged, or failed)."""
    revision_id = sync.revision_id
    if revision_id is None:
        revision_id = Space.objects.values_list("current_revision_id", flat=True).get(
            pk=sync.space_id
        )
    optional = {"commit": sync.commit, "reason": sync.reason}
    events.fire(
        "space_gitsync_completed",
        organization=sync.space.organization,
        space=sync.space,
        spaceId=sync.space_id,
        revisionId=revision_id,
        status=sync.status,
        syncId=str(sync.pk),
        direction=sync.direction,
        **{name: value for name, value in optional.items() if value},
    )
