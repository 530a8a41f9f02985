"""Reads of Git sync. Callers have checked that the person may see the space (its settings
page and the API are the organization's): these read only that space's rows, and never
show credentials, only whether there are some."""

from django.conf import settings

from .models import GitConnection, GitSync

#: The syncs the settings page lists, newest first.
HISTORY_SHOWN = 20


def git_connection_of(space) -> GitConnection | None:
    return GitConnection.objects.filter(space=space).first()


def git_syncs_of(space):
    """The space's syncs, newest first."""
    return GitSync.objects.filter(space=space).select_related("requested_by")


def git_form_values(connection: GitConnection | None) -> dict:
    """The connection form's values as saved (credentials are never shown back)."""
    if connection is None:
        return {"url": "", "branch": "main", "sync_on_revision": False, "username": ""}
    return {
        "url": connection.url,
        "branch": connection.branch,
        "sync_on_revision": connection.sync_on_revision,
        "username": "",
    }


def settings_context(space, *, form: dict | None = None, errors: dict | None = None) -> dict:
    """What the space's settings page shows of its Git connection and syncs; ``form`` and
    ``errors``: a connection form sent back with its errors."""
    connection = git_connection_of(space)
    return {
        "git_connection": connection,
        "git_credentials_set": bool(connection and connection.credentials),
        "git_form": form if form is not None else git_form_values(connection),
        "git_errors": errors or {},
        "git_allowed": settings.GIT_SYNC_ALLOWED,
        "git_syncs": list(git_syncs_of(space).select_related("revision")[:HISTORY_SHOWN]),
    }
