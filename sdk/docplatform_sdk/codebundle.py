"""An integration's code as one value: the ``script`` and the Python modules beside it.

The publisher collects the ``.py`` tree of the integration folder (``collect``); the platform
stores it as canonical JSON bytes (``encode``) whose SHA-256 (``digest``) names it; the runtime
host recomputes that digest from the bytes it is sent and unpacks them (``decode``) into a
read-only folder of the sandbox. Every path is relative, inside the folder, and a ``.py``
file; links, ``..``, hidden folders and ``__pycache__`` never enter; the count and size are
bounded. Pure standard library (it runs in the runtime host).
"""

import hashlib
import json
import os
import posixpath
import stat
from dataclasses import dataclass
from pathlib import Path

MAX_FILES = 200
MAX_ENTRIES = 2000  # files and folders walked, so a tree of empty folders is refused at once
MAX_TOTAL_BYTES = 4 * 1024 * 1024
SKIPPED_FOLDERS = {"__pycache__", "node_modules"}


class BundleError(ValueError):
    """The bundle (or the folder it is made from) breaks a rule; the message says which."""


@dataclass(frozen=True)
class CodeBundle:
    script: str  # the entry module's path, one of ``files``
    files: dict[str, str]  # path -> source text

    def encode(self) -> bytes:
        """The canonical bytes: the same code always gives the same bytes and digest."""
        document = {"script": self.script, "files": dict(sorted(self.files.items()))}
        return json.dumps(document, sort_keys=True, ensure_ascii=False).encode()

    def write(self, folder: Path) -> None:
        """Write the files under ``folder`` (world-readable, as the sandbox user reads them)."""
        for path, source in self.files.items():
            target = folder.joinpath(*path.split("/"))
            target.parent.mkdir(parents=True, exist_ok=True, mode=0o755)
            target.write_text(source, encoding="utf-8")
            target.chmod(0o644)


def digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def check_path(path: str) -> str:
    """``path`` as a safe relative ``.py`` path, or BundleError."""
    if not isinstance(path, str) or not path or "\x00" in path or "\\" in path:
        raise BundleError(f"{path!r} is not a relative file path")
    normalized = posixpath.normpath(path)
    parts = normalized.split("/")
    if normalized != path or path.startswith("/") or ".." in parts or "." in parts:
        raise BundleError(f"{path}: paths must be plain relative paths inside the folder")
    if not path.endswith(".py"):
        raise BundleError(f"{path}: only Python files (.py) are part of the code")
    return path


def decode(data: bytes) -> CodeBundle:
    """The bundle in ``data``; BundleError when it is not one or breaks a limit."""
    if len(data) > MAX_TOTAL_BYTES * 2:
        raise BundleError(f"the bundle is over {MAX_TOTAL_BYTES * 2} bytes")
    try:
        document = json.loads(data)
    except (ValueError, UnicodeDecodeError) as error:
        raise BundleError(f"the bundle is not JSON: {error}") from None
    if not isinstance(document, dict) or set(document) != {"script", "files"}:
        raise BundleError('the bundle must be an object {"script", "files"}')
    files = document["files"]
    if not isinstance(files, dict) or not files:
        raise BundleError("the bundle's files must be a non-empty object")
    if len(files) > MAX_FILES:
        raise BundleError(f"the bundle holds more than {MAX_FILES} files")
    total = 0
    for path, source in files.items():
        check_path(path)
        if not isinstance(source, str):
            raise BundleError(f"{path}: the source must be text")
        total += len(source.encode())
    if total > MAX_TOTAL_BYTES:
        raise BundleError(f"the bundle's files add up to more than {MAX_TOTAL_BYTES} bytes")
    if document["script"] not in files:
        raise BundleError("the bundle's script is not one of its files")
    return CodeBundle(script=document["script"], files=files)


def collect(root: Path, script: str) -> CodeBundle:
    """The ``.py`` tree of the integration folder ``root`` around its ``script``.

    Hidden folders (``.venv``, ``.git``), ``__pycache__`` and ``node_modules`` are skipped;
    a link anywhere in the tree or more than the limits raise BundleError. Third-party
    packages are vendored into the folder by hand.
    """
    files: dict[str, str] = {}
    total = entries = 0
    for folder, subfolders, names in os.walk(root):
        entries += len(subfolders) + len(names)
        if entries > MAX_ENTRIES:
            raise BundleError(
                f"the integration folder holds more than {MAX_ENTRIES} files and folders"
            )
        subfolders[:] = sorted(
            name for name in subfolders if not name.startswith(".") and name not in SKIPPED_FOLDERS
        )
        for name in sorted(names):
            location = Path(folder, name)
            relative = location.relative_to(root).as_posix()
            info = location.lstat()
            if stat.S_ISLNK(info.st_mode):
                raise BundleError(f"{relative}: links are not allowed in the integration folder")
            if not name.endswith(".py") or not stat.S_ISREG(info.st_mode):
                continue
            check_path(relative)
            if len(files) >= MAX_FILES:
                raise BundleError(f"the integration folder holds more than {MAX_FILES} .py files")
            total += info.st_size
            if total > MAX_TOTAL_BYTES:
                raise BundleError(f"the .py files add up to more than {MAX_TOTAL_BYTES} bytes")
            try:
                files[relative] = location.read_text(encoding="utf-8")
            except UnicodeDecodeError:
                raise BundleError(f"{relative} is not UTF-8 text") from None
        for name in subfolders:
            if Path(folder, name).is_symlink():
                relative = Path(folder, name).relative_to(root).as_posix()
                raise BundleError(f"{relative}: links are not allowed in the integration folder")
    if script not in files:
        raise BundleError(f"{script} is not among the integration's Python files")
    return CodeBundle(script=script, files=files)
