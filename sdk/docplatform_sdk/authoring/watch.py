"""Noticing that an integration folder changed, by polling its files' modification times
and sizes (hidden entries and caches left out). Pure Python."""

from pathlib import Path

IGNORED_FOLDERS = {"__pycache__", "node_modules"}


class FolderWatcher:
    """``changed()`` is true once after any file under ``root`` is added, removed or
    rewritten."""

    def __init__(self, root: Path):
        self.root = root
        self._seen = self._snapshot()

    def _snapshot(self) -> dict[Path, tuple[int, int]]:
        snapshot = {}
        for path in self.root.rglob("*"):
            relative = path.relative_to(self.root).parts
            if any(part.startswith(".") or part in IGNORED_FOLDERS for part in relative):
                continue
            try:
                stat = path.stat()
            except OSError:  # removed while walking
                continue
            if path.is_file():
                snapshot[path] = (stat.st_mtime_ns, stat.st_size)
        return snapshot

    def changed(self) -> bool:
        snapshot = self._snapshot()
        if snapshot == self._seen:
            return False
        self._seen = snapshot
        return True
