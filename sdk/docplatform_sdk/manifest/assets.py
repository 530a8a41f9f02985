"""Files a manifest names: the ``script``, the ``icon`` and the ``previewImages``.

Paths are relative to the integration folder (the folder holding the manifest) and must stay
inside it, also once symbolic links are followed. Images must really be PNG or JPEG: the magic
bytes are checked and the whole image is decoded with Pillow. The script must be a Python
file (the runtime runs Python) whose text parses.
"""

from __future__ import annotations

import ast
import io
import posixpath
import re
import stat
import warnings
from dataclasses import dataclass, field
from pathlib import Path

from PIL import Image

from ..tracebacks import code_position
from .constants import (
    MAX_IMAGE_BYTES,
    MAX_IMAGE_PIXELS,
    MAX_SCRIPT_BYTES,
    PREVIEW_IMAGE_SIZE,
    human_size,
)
from .types import Asset, Problem

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"
JPEG_MAGIC = b"\xff\xd8\xff"
_IMAGE_KINDS = {"image/png": ("PNG", (".png",)), "image/jpeg": ("JPEG", (".jpg", ".jpeg"))}
_WINDOWS_DRIVE = re.compile(r"^[A-Za-z]:")


@dataclass
class AssetReport:
    asset: Asset | None = None
    errors: list[Problem] = field(default_factory=list)
    warnings: list[Problem] = field(default_factory=list)


def normalize_asset_path(value: str) -> tuple[str | None, str | None]:
    """Return (normalized relative path, None) or (None, reason)."""
    if not value.strip():
        return None, "must be the path of a file, found an empty string"
    if "\x00" in value:
        return None, "must be a file path; it contains a NUL character"
    if "\\" in value:
        return None, "use forward slashes (/) in paths"
    if value.startswith("/") or _WINDOWS_DRIVE.match(value):
        return None, "must be a path relative to the integration folder, not an absolute path"
    normalized = posixpath.normpath(value)
    if normalized == ".." or normalized.startswith("../"):
        return None, "must stay inside the integration folder ('..' leads out of it)"
    if normalized == ".":
        return None, "must be the path of a file, not of the integration folder"
    return normalized, None


def _read(root: Path | None, value: str, where: str, limit: int, report: AssetReport):
    """Return (normalized path, bytes) of a file inside ``root``, or None after an error."""
    normalized, reason = normalize_asset_path(value)
    if normalized is None:
        report.errors.append(Problem(where, reason or "invalid path"))
        return None
    if root is None:
        report.errors.append(
            Problem(where, f"{normalized} cannot be checked without the integration folder")
        )
        return None
    try:
        base = root.resolve()
        target = (root / normalized).resolve()
    except (OSError, RuntimeError) as exc:  # RuntimeError: a symlink loop on Python 3.11
        report.errors.append(Problem(where, f"{normalized} cannot be resolved ({exc})"))
        return None
    if not target.is_relative_to(base):
        report.errors.append(
            Problem(
                where,
                f"{normalized} leads outside the integration folder (through a symbolic "
                "link); the file must be inside it",
            )
        )
        return None
    try:
        info = target.stat()
    except FileNotFoundError:
        report.errors.append(
            Problem(
                where,
                f"file not found: {normalized} (paths are relative to the folder holding "
                "the manifest)",
            )
        )
        return None
    except OSError as exc:
        report.errors.append(Problem(where, f"{normalized} cannot be read ({exc.strerror})"))
        return None
    if stat.S_ISDIR(info.st_mode):
        report.errors.append(Problem(where, f"{normalized} is a folder, not a file"))
        return None
    if not stat.S_ISREG(info.st_mode):
        report.errors.append(Problem(where, f"{normalized} is not a regular file"))
        return None
    too_big = f"{normalized} is too large: at most {human_size(limit)} is allowed"
    if info.st_size > limit:
        size = human_size(info.st_size)
        if size == human_size(limit):
            size = f"{info.st_size} bytes"
        report.errors.append(Problem(where, f"{too_big}, the file has {size}"))
        return None
    try:
        with target.open("rb") as handle:
            content = handle.read(limit + 1)
    except OSError as exc:
        report.errors.append(Problem(where, f"{normalized} cannot be read ({exc.strerror})"))
        return None
    if len(content) > limit:  # the file grew since stat()
        report.errors.append(Problem(where, too_big))
        return None
    return normalized, content


def check_script(root: Path | None, value: str, where: str) -> AssetReport:
    report = AssetReport()
    normalized, _reason = normalize_asset_path(value)
    if normalized is not None and posixpath.splitext(normalized)[1] != ".py":
        suffix = posixpath.splitext(normalized)[1] or "no extension"
        report.errors.append(
            Problem(
                where,
                f"must be a Python file ending in .py, found {suffix}: the runtime runs "
                "Python code",
            )
        )
        return report
    read = _read(root, value, where, MAX_SCRIPT_BYTES, report)
    if read is None:
        return report
    normalized, content = read
    try:
        source = content.decode("utf-8")
    except UnicodeDecodeError as exc:
        report.errors.append(
            Problem(where, f"{normalized} is not UTF-8 text (invalid byte at offset {exc.start})")
        )
        return report
    try:
        compile(source, normalized, "exec", flags=ast.PyCF_ONLY_AST, dont_inherit=True)
    except SyntaxError as exc:
        # A code problem is named where it is in the code, as a YAML one is in the manifest.
        at = code_position(normalized, exc.lineno, exc.offset)
        report.errors.append(Problem(at, f"SyntaxError: {exc.msg}"))
        return report
    except (ValueError, RecursionError, MemoryError, OverflowError) as exc:
        report.errors.append(Problem(where, f"{normalized} is not valid Python: {exc}"))
        return report
    report.asset = Asset(path=normalized, content=content, content_type="text/x-python")
    return report


def _sniff(content: bytes) -> str:
    head = content[:512].lstrip()
    if not content:
        return "an empty file"
    if content.startswith((b"GIF87a", b"GIF89a")):
        return "a GIF image"
    if content[:4] == b"RIFF" and content[8:12] == b"WEBP":
        return "a WebP image"
    if head.startswith((b"<svg", b"<?xml")) or b"<svg" in head:
        return "an SVG image"
    if content[:4] in (b"II*\x00", b"MM\x00*"):
        return "a TIFF image"
    if content[:2] == b"BM":
        return "a BMP image"
    if content[4:12] in (b"ftypavif", b"ftypheic"):
        return "an AVIF/HEIC image"
    return "not an image of a known kind"


def check_image(root: Path | None, value: str, where: str, *, preview: bool) -> AssetReport:
    report = AssetReport()
    read = _read(root, value, where, MAX_IMAGE_BYTES, report)
    if read is None:
        return report
    normalized, content = read
    if content.startswith(PNG_MAGIC):
        content_type = "image/png"
    elif content.startswith(JPEG_MAGIC):
        content_type = "image/jpeg"
    else:
        report.errors.append(
            Problem(where, f"{normalized} must be a PNG or JPEG image; it is {_sniff(content)}")
        )
        return report
    kind, extensions = _IMAGE_KINDS[content_type]
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", Image.DecompressionBombWarning)
            with Image.open(io.BytesIO(content), formats=[kind]) as image:
                width, height = image.size
                if width * height > MAX_IMAGE_PIXELS:
                    report.errors.append(
                        Problem(
                            where,
                            f"{normalized} is {width}x{height} pixels, more than the "
                            f"{MAX_IMAGE_PIXELS} pixels an image may have",
                        )
                    )
                    return report
                image.load()
    except Image.DecompressionBombError:
        report.errors.append(
            Problem(
                where,
                f"{normalized} has more than the {MAX_IMAGE_PIXELS} pixels an image may have",
            )
        )
        return report
    except Exception as exc:  # Pillow raises many kinds on damaged files
        report.errors.append(
            Problem(
                where, f"{normalized} is not a valid {kind} image (damaged or truncated: {exc})"
            )
        )
        return report
    suffix = posixpath.splitext(normalized)[1].lower()
    if suffix not in extensions:
        report.warnings.append(
            Problem(
                where,
                f"{normalized} holds a {kind} image but its name ends in "
                f"{suffix or 'no extension'}",
            )
        )
    if preview and (width, height) != PREVIEW_IMAGE_SIZE:
        want_w, want_h = PREVIEW_IMAGE_SIZE
        report.warnings.append(
            Problem(
                where,
                f"{normalized} is {width}x{height} pixels; preview images should be "
                f"{want_w}x{want_h} (ratio 2:1)",
            )
        )
    report.asset = Asset(
        path=normalized, content=content, content_type=content_type, width=width, height=height
    )
    return report
