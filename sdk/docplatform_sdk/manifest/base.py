"""What every section of the manifest checker shares: the problems found so far, the messages'
wording, and the checks of generic values (strings, choices, mappings, lists, plain data).

Each section of the manifest has its own module whose mixin adds ``check_<key>`` methods;
``checker._Checker`` combines them and dispatches each top-level key to its method.
"""

from __future__ import annotations

import difflib
import json
import math
import re
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any

from .types import Problem

OrganizationCheck = Callable[[str], bool]

NAME_RE = re.compile(r"[a-z0-9]+(?:-[a-z0-9]+)*")
ORGANIZATION_RE = re.compile(r"[A-Za-z0-9]+(?:-+[A-Za-z0-9]+)*")
BLOCK_ID_RE = re.compile(r"[A-Za-z0-9]+(?:[-_][A-Za-z0-9]+)*")
IDENTIFIER_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
ENV_NAME_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]*")
COMPONENT_ID_RE = re.compile(r"\S+")
PATH_RE = re.compile(r"/(?!/)\S*")
PLAIN_KEY_RE = re.compile(r"[A-Za-z0-9_-]+")
ENV_PLACEHOLDER_RE = re.compile(r"\s*\$\{\{\s*env\.([A-Za-z_][A-Za-z0-9_]*)\s*\}\}\s*")
EXPRESSION_RE = re.compile(r"\$\{\{.*?\}\}", re.DOTALL)
REDACTED = "***"

# --- message helpers ------------------------------------------------------------------------


def describe(value: Any) -> str:
    """How a value found in YAML is named in messages."""
    if value is None:
        return "an empty value"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, dict):
        return "a mapping"
    if isinstance(value, bytes | bytearray):
        return "binary data"
    if isinstance(value, set | frozenset):
        return "a set"
    return f"a {type(value).__name__}"


def join(base: str, key: Any) -> str:
    text = key if isinstance(key, str) else str(key)
    if not PLAIN_KEY_RE.fullmatch(text):
        return f"{base}[{json.dumps(text)}]"
    return f"{base}.{text}" if base else text


def index(base: str, position: int) -> str:
    return f"{base}[{position}]"


def shown(value: str, limit: int = 60) -> str:
    """A user's value quoted for a message, shortened."""
    if len(value) > limit:
        value = value[: limit - 1] + "…"
    return repr(value)


def hint(word: Any, choices: Iterable[str], aliases: Mapping[str, str] | None = None) -> str:
    if not isinstance(word, str):
        return ""
    choices = list(choices)
    if aliases and word in aliases:
        return f"; did you mean {aliases[word]!r}?"
    lowered = {choice.lower(): choice for choice in choices}
    if word.lower() in lowered:
        return f"; did you mean {lowered[word.lower()]!r}?"
    matches = difflib.get_close_matches(word, choices, n=1, cutoff=0.6)
    return f"; did you mean {matches[0]!r}?" if matches else ""


def one_of(choices: Iterable[str]) -> str:
    return ", ".join(choices)


class CheckerBase:
    """The state of one check and the generic checks that every section uses."""

    def __init__(
        self,
        *,
        root: Path | None,
        env: Mapping[str, str] | None,
        organization_is_internal: OrganizationCheck,
        filename: str,
    ) -> None:
        self.root = root
        self.env = env
        self.organization_is_internal = organization_is_internal
        self.filename = filename
        self.errors: list[Problem] = []
        self.warnings: list[Problem] = []
        self.values: dict[str, Any] = {}
        self._internal: bool | None = None
        self._organization: str | None = None

    def error(self, path: str, message: str) -> None:
        self.errors.append(Problem(path, message))

    def warn(self, path: str, message: str) -> None:
        self.warnings.append(Problem(path, message))

    def unknown_key(self, path: str, key: Any, allowed: Iterable[str]) -> None:
        allowed = tuple(allowed)
        suggestion = hint(key, allowed)
        if suggestion:
            self.error(path, f"unknown key{suggestion}")
        else:
            self.error(path, f"unknown key; the keys allowed here are {one_of(allowed)}")

    def wrong_type(self, path: str, expected: str, value: Any) -> None:
        message = f"must be {expected}, found {describe(value)}"
        if expected.startswith("a string") and isinstance(value, bool | int | float):
            message += "; put the value in quotes to make it text"
        self.error(path, message)

    def mapping(self, value: Any, path: str, expected: str = "a mapping") -> dict | None:
        if isinstance(value, dict):
            return value
        self.wrong_type(path, expected, value)
        return None

    def sequence(self, value: Any, path: str, expected: str = "a list") -> list | None:
        if isinstance(value, list):
            return value
        self.wrong_type(path, expected, value)
        return None

    def string(
        self,
        value: Any,
        path: str,
        *,
        max_length: int | None = None,
        allow_empty: bool = False,
    ) -> str | None:
        if not isinstance(value, str):
            self.wrong_type(path, "a string", value)
            return None
        if not allow_empty and not value.strip():
            self.error(path, "must not be empty")
            return None
        if max_length is not None and len(value) > max_length:
            self.error(path, f"is {len(value)} characters long; at most {max_length} are allowed")
            return None
        return value

    def choice(self, value: Any, path: str, choices: tuple[str, ...]) -> str | None:
        text = self.string(value, path)
        if text is None:
            return None
        if text not in choices:
            self.error(
                path,
                f"must be one of {one_of(choices)}, found {shown(text)}{hint(text, choices)}",
            )
            return None
        return text

    def keys(
        self, mapping: dict, path: str, allowed: tuple[str, ...], required: tuple[str, ...] = ()
    ) -> None:
        for key in mapping:
            if key not in allowed:
                self.unknown_key(join(path, key), key, allowed)
        for key in required:
            if key not in mapping:
                self.error(join(path, key), "is required")

    def plain_data(self, value: Any, path: str) -> bool:
        """Values that JSON can hold (what ``raw`` stores); report the first other one."""
        if value is None or isinstance(value, str | bool | int):
            return True
        if isinstance(value, float):
            if math.isfinite(value):
                return True
            self.error(path, "must be a finite number")
            return False
        if isinstance(value, list):
            return all(self.plain_data(item, index(path, i)) for i, item in enumerate(value))
        if isinstance(value, dict):
            for key, item in value.items():
                if not isinstance(key, str):
                    self.error(join(path, key), f"keys must be strings, found {describe(key)}")
                    return False
                if not self.plain_data(item, join(path, key)):
                    return False
            return True
        self.error(
            path, f"must be plain data (text, numbers, lists, mappings), found {describe(value)}"
        )
        return False

    def is_internal(self) -> bool:
        if self._internal is None:
            self._internal = bool(
                self._organization is not None and self.organization_is_internal(self._organization)
            )
        return self._internal
