"""Unpacking an uploaded integration bundle (a .zip or .tar.gz of the integration folder).

Only regular files and folders are written, each inside the destination: absolute paths,
``..`` components, links and devices refuse the whole bundle, and so do more than
``MAX_ENTRIES`` files and folders or more than ``MAX_EXTRACTED_BYTES`` once unpacked (counted
on the bytes actually written, so a lying header does not help). Every entry counts against
``MAX_ENTRIES``, and so does every folder a path implies, so a zip of 20,000 folders (or one
20,000 folders deep) is refused before anything is written, a tar as soon as it goes past
the limit. Every problem is a ValidationError on the ``bundle`` field.
"""

import stat
import tarfile
import zipfile
import zlib
from pathlib import Path, PurePosixPath

from django.core.exceptions import ValidationError
from docplatform_sdk.manifest import MANIFEST_FILENAME

MIB = 1024 * 1024
MAX_BUNDLE_BYTES = 10 * MIB
MAX_EXTRACTED_BYTES = 20 * MIB
MAX_ENTRIES = 1000  # files and folders, the archive's own (ignored ones too) and implied ones
IGNORED_FOLDERS = ("__MACOSX",)  # what macOS adds to the zip files it makes
_CHUNK = 64 * 1024


class BundleError(Exception):
    """A bundle that cannot be unpacked safely; the message says why."""


def refused(reason: str) -> ValidationError:
    return ValidationError({"bundle": [reason]})


def _safe_parts(name: str) -> tuple[str, ...]:
    """The entry's path components, or BundleError when it would leave the destination."""
    if "\x00" in name:
        raise BundleError(f"{name!r}: a file name cannot hold a NUL character")
    path = PurePosixPath(name.replace("\\", "/"))
    if path.is_absolute() or (path.parts and path.parts[0].endswith(":")):
        raise BundleError(f"{name}: absolute paths are not allowed")
    if ".." in path.parts:
        raise BundleError(f"{name}: '..' is not allowed in a path")
    return tuple(part for part in path.parts if part not in ("", "."))


def _too_many_entries() -> BundleError:
    return BundleError(f"more than {MAX_ENTRIES} files and folders")


class _Writer:
    """Writes entries under ``destination``, counting entries (every file and folder, the
    archive's own and those its paths imply) and bytes against the limits."""

    def __init__(self, destination: Path):
        self.destination = destination
        self.entries = 0
        self.bytes = 0
        self.folders: set[tuple[str, ...]] = set()

    def _count(self, entries: int = 1) -> None:
        self.entries += entries
        if self.entries > MAX_ENTRIES:
            raise _too_many_entries()

    def _parts(self, name: str) -> tuple[str, ...] | None:
        """The entry's path inside the destination, or None for what is skipped; counts
        the entry and the folders its path implies that were not counted yet."""
        parts = _safe_parts(name)
        skipped = not parts or parts[0] in IGNORED_FOLDERS
        self._count()
        if skipped:
            return None
        implied = [parts[:depth] for depth in range(1, len(parts))]
        new = [folder for folder in implied if folder not in self.folders]
        self._count(len(new))
        self.folders.update(new)
        return parts

    def folder(self, name: str) -> None:
        parts = self._parts(name)
        if parts is not None and parts not in self.folders:
            self.folders.add(parts)
            self.destination.joinpath(*parts).mkdir(parents=True, exist_ok=True)

    def file(self, name: str, declared_size: int, source) -> None:
        parts = self._parts(name)
        if parts is None:
            return
        target = self.destination.joinpath(*parts)
        if self.bytes + declared_size > MAX_EXTRACTED_BYTES:
            raise BundleError(f"more than {MAX_EXTRACTED_BYTES // MIB} MiB once unpacked")
        target.parent.mkdir(parents=True, exist_ok=True)
        with source() as stream, target.open("wb") as out:
            while chunk := stream.read(_CHUNK):
                self.bytes += len(chunk)
                if self.bytes > MAX_EXTRACTED_BYTES:
                    raise BundleError(f"more than {MAX_EXTRACTED_BYTES // MIB} MiB once unpacked")
                out.write(chunk)


def _unzip(archive: zipfile.ZipFile, writer: _Writer) -> None:
    entries = archive.infolist()
    if len(entries) > MAX_ENTRIES:  # known from the central directory: refused at once
        raise _too_many_entries()
    for info in entries:
        file_type = stat.S_IFMT(info.external_attr >> 16)  # 0 when the zip tool left none
        if file_type == stat.S_IFLNK:
            raise BundleError(f"{info.filename}: links are not allowed")
        if file_type not in (0, stat.S_IFREG, stat.S_IFDIR):
            raise BundleError(f"{info.filename}: only files and folders are allowed")
        if info.is_dir():
            writer.folder(info.filename)
        else:
            writer.file(info.filename, info.file_size, lambda info=info: archive.open(info))


def _untar(archive: tarfile.TarFile, writer: _Writer) -> None:
    for member in archive:
        if member.issym() or member.islnk():
            raise BundleError(f"{member.name}: links are not allowed")
        if member.isdir():
            writer.folder(member.name)
        elif member.isfile():
            writer.file(member.name, member.size, lambda m=member: archive.extractfile(m))
        else:
            raise BundleError(f"{member.name}: only files and folders are allowed")


def _manifest_folder(destination: Path) -> Path:
    if (destination / MANIFEST_FILENAME).is_file():
        return destination
    entries = [entry for entry in destination.iterdir() if entry.name not in IGNORED_FOLDERS]
    if len(entries) == 1 and (entries[0] / MANIFEST_FILENAME).is_file():
        return entries[0]
    raise BundleError(
        f"no {MANIFEST_FILENAME} at the bundle's root or inside its one top-level folder"
    )


def extract_bundle(upload, destination: Path) -> Path:
    """Unpack ``upload`` (a file object) into the empty folder ``destination``, which the
    caller removes afterwards; returns the folder holding the manifest. Raises
    ValidationError on the ``bundle`` field."""
    if upload.size > MAX_BUNDLE_BYTES:
        raise refused(f"the bundle is larger than {MAX_BUNDLE_BYTES // MIB} MiB")
    writer = _Writer(destination)
    try:
        upload.seek(0)
        is_gzip = upload.read(2) == b"\x1f\x8b"
        upload.seek(0)
        if zipfile.is_zipfile(upload):
            upload.seek(0)
            with zipfile.ZipFile(upload) as archive:
                _unzip(archive, writer)
        elif is_gzip:
            upload.seek(0)
            with tarfile.open(fileobj=upload, mode="r:gz") as archive:
                _untar(archive, writer)
        else:
            raise BundleError("not a .zip or .tar.gz archive")
        return _manifest_folder(destination)
    except BundleError as exc:
        raise refused(str(exc)) from exc
    except (
        zipfile.BadZipFile,
        tarfile.TarError,
        zlib.error,
        EOFError,
        OSError,
        RuntimeError,  # an encrypted zip entry
        NotImplementedError,  # an unsupported zip compression
        ValueError,
    ) as exc:
        raise refused(f"the archive cannot be read ({exc.__class__.__name__})") from exc
