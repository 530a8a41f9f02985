"""Where a sync's repository work runs: a process of its own (``work``), under
``GIT_SYNC_MAX_MEMORY_MB`` of memory and ``GIT_SYNC_WORK_SECONDS`` of time. A repository
built to exhaust memory or time (an alias bomb, a huge file, thousands of files) ends that
process and fails its sync with the limit named; the worker that ran the sync goes on.

The process gets no database, no settings and no secrets but the remote's credentials, in
its request on stdin; of the environment, only what runs Python and ``ssh``.
"""

import contextlib
import json
import logging
import math
import os
import signal
import subprocess
import sys
from pathlib import Path

from django.conf import settings

from .work import MEMORY_EXIT

logger = logging.getLogger(__name__)
PROJECT_ROOT = Path(__file__).resolve().parents[2]
#: What the process keeps of the worker's environment.
KEPT_ENVIRONMENT = ("PATH", "HOME", "LANG", "LC_ALL", "TMPDIR", "SSH_AUTH_SOCK", "PYTHONPATH")


class WorkFailed(Exception):
    """Why the repository work did not answer, in words for the sync's history."""


def repository_work(request: dict) -> dict:
    """Run ``request`` (see ``work``) in its own limited process; its answer, or WorkFailed."""
    memory, seconds = settings.GIT_SYNC_MAX_MEMORY_MB, settings.GIT_SYNC_WORK_SECONDS
    process = subprocess.Popen(  # noqa: S603 - our own module, an argument list
        [sys.executable, "-m", "docplatform.gitsync.work", str(memory), str(math.ceil(seconds))],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        cwd=PROJECT_ROOT,
        env={name: os.environ[name] for name in KEPT_ENVIRONMENT if name in os.environ},
        start_new_session=True,  # its ssh too: ended with it
    )
    try:
        out, err = process.communicate(json.dumps(request).encode(), timeout=seconds)
    except subprocess.TimeoutExpired:
        _end(process)
        raise WorkFailed(
            f"the repository took longer than {seconds:g} s to read or write "
            "(GIT_SYNC_WORK_SECONDS)"
        ) from None
    if process.returncode == MEMORY_EXIT or b"MemoryError" in err[-4096:]:
        raise WorkFailed(
            f"the repository needed more than {memory} MB of memory (GIT_SYNC_MAX_MEMORY_MB)"
        )
    if process.returncode in (-signal.SIGXCPU, -signal.SIGKILL):
        raise WorkFailed(
            f"the repository took more than {seconds:g} s of processor time (GIT_SYNC_WORK_SECONDS)"
        )
    if process.returncode != 0:
        logger.error("Git sync work ended with %s: %s", process.returncode, err[-4096:])
        raise WorkFailed(f"the sync's process stopped unexpectedly ({process.returncode})")
    return json.loads(out)


def _end(process: subprocess.Popen) -> None:
    with contextlib.suppress(ProcessLookupError):
        os.killpg(process.pid, signal.SIGKILL)
    process.communicate()
