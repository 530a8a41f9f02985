"""Git sync of spaces (the documentation product; README, "Git sync"): the repositories
allowed, network timeouts and when a sync is taken as lost."""

from .base import DEBUG, VAR_DIR
from .celery import CELERY_BEAT_SCHEDULE
from .environment import env, env_positive

# The repositories a space may sync with: comma-separated glob patterns (fnmatch, where "*"
# also matches "/") matched against the address as entered: https://, ssh:// or an absolute
# path for a repository on the worker's disk. Nothing is allowed by default, except in
# development (DEBUG), where the repositories under <VAR_DIR>/git/ are.
GIT_SYNC_ALLOWED = [
    pattern.strip()
    for pattern in env.list(
        "GIT_SYNC_ALLOWED", default=[str(VAR_DIR / "git" / "*")] if DEBUG else []
    )
    if pattern.strip()
]
# Each network operation of a sync (connect, and each read or write) gives up after this.
GIT_SYNC_TIMEOUT_SECONDS = env_positive(float, "GIT_SYNC_TIMEOUT_SECONDS", 30.0)
# A sync still running (or never started) after this is taken as lost with its worker: it is
# marked failed, and the space may sync again.
GIT_SYNC_MAX_SECONDS = env_positive(int, "GIT_SYNC_MAX_SECONDS", 900)
CELERY_BEAT_SCHEDULE["fail-stale-git-syncs"] = {
    "task": "docplatform.tasks.fail_stale_git_syncs",
    "schedule": 300.0,
}
