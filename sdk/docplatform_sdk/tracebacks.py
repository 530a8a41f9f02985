"""Tracebacks in the author's words: frames name their files relative to the bundle
(``main.py``, ``helpers/util.py``), and the SDK's and the worker's own frames are left out.

``author_traceback(error, folder)`` formats an exception raised by integration code whose
bundle is unpacked in ``folder``, its causes and contexts included.
"""

import os
import traceback

SDK_FOLDER = os.path.dirname(os.path.abspath(__file__)) + os.sep


def _author_path(filename: str, folder: str) -> str | None:
    """``filename`` relative to the bundle, or None when it is not the author's."""
    if not filename:
        return None
    path = os.path.abspath(filename)
    if path.startswith(folder):
        return path[len(folder) :]
    return None


def _kept(frame: traceback.FrameSummary, folder: str) -> traceback.FrameSummary | None:
    """The frame as the author sees it, or None for the SDK's and the worker's own."""
    relative = _author_path(frame.filename, folder)
    if relative is None:
        if frame.filename.startswith(SDK_FOLDER) or frame.filename.startswith("<"):
            return None
        return frame
    # The source line as it was read (the file's own path); no column marks.
    return traceback.FrameSummary(
        relative, frame.lineno, frame.name, lookup_line=False, line=frame.line
    )


def _rewrite(exception: traceback.TracebackException, folder: str, seen: set[int]):
    if id(exception) in seen:
        return
    seen.add(id(exception))
    frames = [kept for frame in exception.stack if (kept := _kept(frame, folder)) is not None]
    exception.stack = traceback.StackSummary.from_list(frames)
    filename = getattr(exception, "filename", None)  # a SyntaxError's file
    if filename and (relative := _author_path(filename, folder)) is not None:
        exception.filename = relative
    for linked in (exception.__cause__, exception.__context__):
        if linked is not None:
            _rewrite(linked, folder, seen)
    for member in getattr(exception, "exceptions", None) or ():
        _rewrite(member, folder, seen)


def author_traceback(error: BaseException, folder: str) -> str:
    """The traceback of ``error`` with the author's files named relative to ``folder``."""
    folder = os.path.abspath(folder).rstrip(os.sep) + os.sep
    summary = traceback.TracebackException.from_exception(error)
    _rewrite(summary, folder, set())
    return "".join(summary.format())


def code_position(file: str, line: int | None, column: int | None = None) -> str:
    """``main.py:3:9``: where a problem is in the code (line and column from 1, each when
    known), the form a manifest's YAML problem has (``service-manifest.yaml:3:9``)."""
    if not line:
        return file
    return f"{file}:{line}:{column}" if column else f"{file}:{line}"
