"""What the command line prints: plain lines, colours only on a terminal (never with
``NO_COLOR``), JSON for scripts (``--json``)."""

import json
import os
import sys

STYLES = {"ok": "32", "error": "31", "warning": "33", "dim": "2", "bold": "1"}


def colours_on(stream) -> bool:
    """Colours for a terminal, unless ``NO_COLOR`` is set (to anything, https://no-color.org)."""
    return "NO_COLOR" not in os.environ and hasattr(stream, "isatty") and stream.isatty()


def paint(text: str, style: str | None, stream=None) -> str:
    stream = stream or sys.stdout
    if style is None or not colours_on(stream):
        return text
    return f"\033[{STYLES[style]}m{text}\033[0m"


def say(text: str = "", style: str | None = None) -> None:
    """One line on stdout, flushed (a pipe reads it at once)."""
    print(paint(text, style), flush=True)


def warn(text: str) -> None:
    print(paint(text, "warning", sys.stderr), file=sys.stderr, flush=True)


def print_json(value) -> None:
    print(json.dumps(value, indent=2, sort_keys=False), flush=True)
