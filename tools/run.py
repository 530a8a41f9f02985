"""``make run``: the Procfile's processes together under honcho, stopped as one expects on
Ctrl-C.

Honcho alone sends SIGTERM to each process's whole process group and SIGKILLs whatever still
runs 5 s after the first one stopped: a Celery worker's pool processes died under their
parent (ERROR lines in the log), and its warm shutdown (3 to 8 s here: the consumer's last
poll of the broker, then closing it) ended in a SIGKILL, so every stop looked like a crash.
Here each process is sent SIGTERM alone and stops its own children (the worker its pool, the
runtime host its sandboxed workers), and only what still runs ``STOP_SECONDS`` later is
killed, with its group. A process that stopped when asked is said to have stopped, without
honcho's return code (``rc=-15`` read as a crash).

    python tools/run.py [honcho start's options]
"""

import contextlib
import os
import signal
import sys

from honcho import command, manager
from honcho.command import main
from honcho.compat import ProcessManager

#: How long the processes have to stop before they are killed.
STOP_SECONDS = 20


class EachStopsItsOwn(ProcessManager):
    """SIGTERM to the process alone (its children are its own to stop); SIGKILL, later, to
    its whole group, as honcho does."""

    def terminate(self, pid):
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(pid, signal.SIGTERM)


class CalmManager(manager.Manager):
    def _system_print(self, data):
        for code in ("rc=0", f"rc=-{signal.SIGTERM.value}"):
            data = data.replace(f" stopped ({code})", " stopped")
        super()._system_print(data)


if __name__ == "__main__":
    manager.KILL_WAIT = STOP_SECONDS
    manager.ProcessManager = EachStopsItsOwn  # what each Manager builds its own from
    command.Manager = CalmManager  # what ``honcho start`` builds
    sys.exit(main(["start", *sys.argv[1:]]))
