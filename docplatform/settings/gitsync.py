"""Git sync of spaces (the documentation product; README, "Git sync"): the repositories
allowed, network timeouts and when a sync is taken as lost."""

from django.core.exceptions import ImproperlyConfigured

from .base import DEBUG, VAR_DIR
from .celery import CELERY_BEAT_SCHEDULE
from .environment import env, env_networks, env_positive

# The repositories a space may sync with: comma-separated patterns matched against the address
# as entered (https://, ssh:// or an absolute path for a repository on the worker's disk): the
# scheme, user and port as written, the host label by label ("*" is one DNS label) and the
# path segment by segment ("*" within one segment, "**" across them). Nothing is allowed by
# default, except in development (DEBUG), where the repositories under <VAR_DIR>/git/ are.
GIT_SYNC_ALLOWED = [
    pattern.strip()
    for pattern in env.list(
        "GIT_SYNC_ALLOWED", default=[str(VAR_DIR / "git" / "*")] if DEBUG else []
    )
    if pattern.strip()
]
# Every address a sync dials must be public (as webhook URLs must): comma-separated CIDRs of
# networks it may dial anyway (a Git server on the local network; empty by default).
GIT_SYNC_ALLOWED_NETWORKS = env_networks("GIT_SYNC_ALLOWED_NETWORKS")
# Each network operation of a sync (connect, and each read or write) gives up after this.
GIT_SYNC_TIMEOUT_SECONDS = env_positive(float, "GIT_SYNC_TIMEOUT_SECONDS", 30.0)
# A sync still running (or never started) after this is taken as lost with its worker: it is
# marked failed, and the space may sync again.
GIT_SYNC_MAX_SECONDS = env_positive(int, "GIT_SYNC_MAX_SECONDS", 900)
# A sync reads and writes the repository in a process of its own (docplatform.gitsync.work):
# a repository that needs more memory or time than this fails its sync with the limit named.
GIT_SYNC_MAX_MEMORY_MB = env_positive(int, "GIT_SYNC_MAX_MEMORY_MB", 512)
GIT_SYNC_WORK_SECONDS = env_positive(float, "GIT_SYNC_WORK_SECONDS", 600.0)
if GIT_SYNC_WORK_SECONDS >= GIT_SYNC_MAX_SECONDS:
    raise ImproperlyConfigured(
        f"GIT_SYNC_WORK_SECONDS ({GIT_SYNC_WORK_SECONDS:g}) must be less than "
        f"GIT_SYNC_MAX_SECONDS ({GIT_SYNC_MAX_SECONDS}), after which a running sync is taken "
        "as lost"
    )
CELERY_BEAT_SCHEDULE["fail-stale-git-syncs"] = {
    "task": "docplatform.tasks.fail_stale_git_syncs",
    "schedule": 300.0,
}
