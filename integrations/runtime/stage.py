"""The runtime host's scratch folder, its stage: the SDK copy (``sdk``), the bundles
unpacked for its workers (``bundles``), the sandbox's mount points (``root``, ``python``),
all readable by the worker user, and the host's pid with its start time (``host.pid``). A
host starting removes the stages of hosts that are gone (killed before they could clean up).
The sandbox (``sandbox.py``) makes one and removes it when it closes.
"""

import glob
import logging
import os
import shutil
import tempfile
from pathlib import Path

from docplatform_sdk.staging import copy_runtime_sdk

logger = logging.getLogger("integrations.runtime")

STAGE_PREFIX = "docplatform-runtime-"
OWNER_FILE = "host.pid"


def make_stage(worker: int | None) -> str:
    """A folder the worker user can read: the SDK and oauthlib, copied; bundles go beside.
    The stages of hosts that are gone are removed first."""
    # Not under TMPDIR: every folder above the stage must be open to the worker user.
    parent = os.environ.get("RUNTIME_STAGE_DIR", "/tmp")
    remove_stale_stages(parent)
    stage = tempfile.mkdtemp(prefix=STAGE_PREFIX, dir=parent)
    os.chmod(stage, 0o755)
    Path(stage, OWNER_FILE).write_text(_process_identity(os.getpid()) or "")
    copy_runtime_sdk(Path(stage, "sdk"))
    for folder, _subfolders, files in os.walk(stage):
        os.chmod(folder, 0o755)
        for name in files:
            os.chmod(os.path.join(folder, name), 0o644)
    os.mkdir(Path(stage, "bundles"), 0o755)
    os.mkdir(Path(stage, "root"), 0o755)
    if worker is not None:
        os.mkdir(Path(stage, "python"), 0o755)
    return stage


def _process_identity(pid: int) -> str | None:
    """A process's pid and start time (a reused pid has another), None when it is gone."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as handle:
            started = handle.read().rpartition(b")")[2].split()[19].decode()
    except (OSError, IndexError):
        return None
    return f"{pid} {started}"


def remove_stale_stages(parent: str) -> list[str]:
    """Remove the stages in ``parent`` whose host is gone (killed before it could remove
    them); returns them. A stage without its owner's pid is left alone."""
    removed = []
    for stage in glob.glob(os.path.join(glob.escape(parent), STAGE_PREFIX + "*")):
        try:
            owner = Path(stage, OWNER_FILE).read_text().strip()
            alive = _process_identity(int(owner.split()[0])) == owner
        except (OSError, ValueError, IndexError):
            continue
        if not alive:
            shutil.rmtree(stage, ignore_errors=True)
            removed.append(stage)
    if removed:
        logger.info("removed %d scratch folders of runtime hosts that are gone", len(removed))
    return removed
