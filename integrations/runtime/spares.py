"""Spare workers: sandboxed interpreters started ahead, the SDK imported, bound to no version.

Each spare has its own empty folder (read-only at ``/bundle`` inside its sandbox). A version
that needs a worker takes a spare, writes its bundle into the spare's folder from the host's
side and has it load the code: a cold start costs that load, not an interpreter's start
(bubblewrap and Python: about 300 ms). A new spare is started in the background in its
place at once, however full the host is: spares hold no slot of the host-wide cap and count
against none of its memory (``capacity.py``), so a host whose workers fill the cap still
answers a new version's first call, or the next of a worker it stopped, in milliseconds.
"""

import itertools
import logging
import shutil
import threading
import time
from dataclasses import dataclass
from pathlib import Path

from .capacity import WORKER_BYTES_ESTIMATE, Capacity
from .worker_process import Worker
from .worker_start import WorkerSettings

logger = logging.getLogger("integrations.runtime")

_numbers = itertools.count()


@dataclass(eq=False)
class Slot:
    """A started worker and the folder bound at its ``/bundle``; once bound to a version,
    what it holds of the host's memory (as last measured, ``capacity.py``)."""

    worker: Worker
    folder: Path
    memory: int = WORKER_BYTES_ESTIMATE

    @classmethod
    def start(cls, settings: WorkerSettings, bundles: Path) -> "Slot":
        folder = bundles / f"worker-{next(_numbers)}"
        folder.mkdir(mode=0o755)
        try:
            return cls(Worker.spawn(settings, str(folder)), folder)
        except BaseException:
            shutil.rmtree(folder, ignore_errors=True)
            raise

    def stop(self):
        self.worker.kill()
        shutil.rmtree(self.folder, ignore_errors=True)


class Spares:
    """Up to ``spare_workers`` spares, kept by a thread of their own."""

    def __init__(self, capacity: Capacity, settings: WorkerSettings, bundles: Path):
        self.capacity, self.settings, self.bundles = capacity, settings, bundles
        self.slots: list[Slot] = []  # started, the oldest first (some may still be booting)
        self._starting = 0
        self._stopped = False
        threading.Thread(target=self._keep, name="spares", daemon=True).start()

    def take(self) -> Slot | None:
        """A spare, or None; with ``capacity.changed`` held (the keeper starts another)."""
        while self.slots:
            slot = self.slots.pop(0)  # the oldest: the most likely to be done booting
            self.capacity.changed.notify_all()
            if slot.worker.usable():
                return slot
            slot.stop()  # it died while waiting
        return None

    def _keep(self):
        capacity = self.capacity
        while True:
            with capacity.changed:
                capacity.changed.wait_for(lambda: self._stopped or self._may_start())
                if self._stopped:
                    return
                self._starting += 1
            try:
                slot = Slot.start(self.settings, self.bundles)
            except Exception as error:
                logger.warning("a spare worker failed to start: %s", error)
                slot = None
            with capacity.changed:
                self._starting -= 1
                if slot is not None and not self._stopped:
                    self.slots.append(slot)
                    capacity.changed.notify_all()
                    continue
            if slot is None:
                time.sleep(1)  # a moment before trying again
            else:  # the host stopped meanwhile
                slot.stop()

    def _may_start(self) -> bool:
        return self.capacity.settings.spare_workers > len(self.slots) + self._starting

    def close(self):
        with self.capacity.changed:
            self._stopped = True
            ready, self.slots = self.slots, []
            self.capacity.changed.notify_all()
        for slot in ready:
            slot.stop()
