"""Reading untrusted YAML safely: size, encoding, nesting and alias-expansion limits. The one
home for YAML from outside: manifests (``load_manifest_yaml``) and the front matter of files
that Git sync imports (``load_limited_yaml`` with ``FRONT_MATTER_LIMITS``).

The text is first streamed as parser events (libyaml when available), counting nesting depth
and the number of nodes the document holds once every alias is expanded, *without* building
anything; only a document within the limits is composed and constructed with a safe loader.
A "billion laughs" file is therefore refused after reading a few hundred events.

YAML timestamps are read as plain strings: no manifest field is a date, and an author who
writes ``2024-13-01`` means text, not an invalid date.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import yaml
from yaml.constructor import SafeConstructor

from .constants import MAX_MANIFEST_BYTES, MAX_YAML_DEPTH, MAX_YAML_NODES, human_size
from .types import Problem

try:  # pragma: no branch
    from yaml import CSafeLoader as _BaseLoader
except ImportError:  # pragma: no cover - PyYAML built without libyaml
    from yaml import SafeLoader as _BaseLoader  # type: ignore[assignment]


class _ManifestLoader(_BaseLoader):  # type: ignore[misc, valid-type]
    """Safe loader that keeps timestamps as strings."""


_ManifestLoader.add_constructor("tag:yaml.org,2002:timestamp", SafeConstructor.construct_yaml_str)

_MERGE_TAG = "tag:yaml.org,2002:merge"
_BOMS = {
    b"\x00\x00\xfe\xff": "UTF-32",
    b"\xff\xfe\x00\x00": "UTF-32",
    b"\xfe\xff": "UTF-16",
    b"\xff\xfe": "UTF-16",
}


@dataclass(frozen=True)
class YamlLimits:
    """What a document of one kind may hold: bytes, nesting depth, values once every alias
    is expanded, and aliases (``*name``) written (None: no budget of their own)."""

    max_bytes: int
    max_depth: int
    max_nodes: int
    max_aliases: int | None = None
    what: str = "a manifest"
    holder: str = "the file"


MANIFEST_LIMITS = YamlLimits(MAX_MANIFEST_BYTES, MAX_YAML_DEPTH, MAX_YAML_NODES)
#: A page's front matter holds a title and a few fields: a small budget.
FRONT_MATTER_LIMITS = YamlLimits(
    64 * 1024,
    max_depth=16,
    max_nodes=2_000,
    max_aliases=16,
    what="front matter",
    holder="it",
)


@dataclass
class Loaded:
    """The parsed document, or the problems that stopped it (then ``document`` is None)."""

    document: Any
    errors: list[Problem]


def _too_deep(limits: YamlLimits) -> str:
    return f"values are nested more than {limits.max_depth} levels deep"


TOO_DEEP = _too_deep(MANIFEST_LIMITS)
#: libyaml's own nesting limit (1,000 levels, in the wheels of PyYAML 6.0.4) is met before ours
#: where its scanner reads ahead through a run of ``[`` or ``{``; it is said as ours.
_LIBYAML_TOO_DEEP = "exceeded maximum nesting depth"


class _LimitExceeded(Exception):
    def __init__(self, mark: Any, message: str) -> None:
        super().__init__(message)
        self.mark = mark
        self.message = message


def _at(filename: str, mark: Any) -> str:
    if mark is None:
        return filename
    return f"{filename}:{mark.line + 1}:{mark.column + 1}"


def decode_yaml_bytes(
    data: bytes, filename: str, limits: YamlLimits = MANIFEST_LIMITS
) -> tuple[str | None, list[Problem]]:
    """Check size and encoding; return the text or the problems."""
    if len(data) > limits.max_bytes:
        return None, [
            Problem(
                filename,
                f"{limits.holder} is {human_size(len(data))}; {limits.what} may be at most "
                f"{human_size(limits.max_bytes)}",
            )
        ]
    for bom, encoding in _BOMS.items():
        if data.startswith(bom):
            return None, [Problem(filename, f"the file is {encoding} text; save it as UTF-8")]
    nul = data.find(b"\x00")
    if nul != -1:
        return None, [
            Problem(
                filename,
                f"the file is binary (a NUL byte at offset {nul}); {limits.what} is UTF-8 YAML "
                "text",
            )
        ]
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        byte = data[exc.start]
        return None, [
            Problem(
                filename,
                f"the file is not UTF-8 text (byte 0x{byte:02x} at offset {exc.start}); "
                "save it as UTF-8",
            )
        ]
    return text.removeprefix("\ufeff"), []


def _check_limits(text: str, limits: YamlLimits) -> None:
    """Stream the events; raise _LimitExceeded (or a YAMLError) on a document too big."""
    loader = _ManifestLoader(text)
    # one frame per open collection: [expanded node count, height of its children, anchor]
    stack: list[list[Any]] = []
    anchors: dict[str, tuple[int, int]] = {}  # anchor -> (expanded node count, height)
    open_anchors: set[str] = set()
    total = aliases = 0

    def count(size: int, height: int, mark: Any) -> None:
        nonlocal total
        total += size
        if total > limits.max_nodes:
            raise _LimitExceeded(
                mark,
                f"the document holds more than {limits.max_nodes} values once its aliases "
                f"(*name) are expanded; {limits.what} needs far fewer, so this looks like an "
                "alias bomb",
            )
        if len(stack) + height > limits.max_depth:
            raise _LimitExceeded(mark, _too_deep(limits))

    def attach(size: int, height: int) -> None:
        if stack:
            stack[-1][0] += size
            stack[-1][1] = max(stack[-1][1], height)

    try:
        while loader.check_event():
            event = loader.get_event()
            if isinstance(event, yaml.ScalarEvent):
                count(1, 0, event.start_mark)
                attach(1, 0)
                if event.anchor is not None:
                    anchors[event.anchor] = (1, 0)
            elif isinstance(event, yaml.CollectionStartEvent):
                count(1, 1, event.start_mark)
                if event.anchor is not None:
                    open_anchors.add(event.anchor)
                    anchors.pop(event.anchor, None)
                stack.append([1, 0, event.anchor])
            elif isinstance(event, yaml.CollectionEndEvent):
                size, height, anchor = stack.pop()
                attach(size, height + 1)
                if anchor is not None:
                    open_anchors.discard(anchor)
                    anchors[anchor] = (size, height + 1)
            elif isinstance(event, yaml.AliasEvent):
                aliases += 1
                if limits.max_aliases is not None and aliases > limits.max_aliases:
                    raise _LimitExceeded(
                        event.start_mark,
                        f"more than {limits.max_aliases} aliases (*name); {limits.what} needs none",
                    )
                if event.anchor in open_anchors:
                    raise _LimitExceeded(
                        event.start_mark,
                        f"the alias *{event.anchor} refers to its own enclosing anchor "
                        f"&{event.anchor}; recursive structures are not allowed",
                    )
                size, height = anchors.get(event.anchor, (1, 0))
                count(size, height, event.start_mark)
                attach(size, height)
    finally:
        loader.dispose()


def _duplicate_keys(root: Any, filename: str) -> list[Problem]:
    problems: list[Problem] = []
    seen: set[int] = set()
    todo = [root]
    while todo:
        node = todo.pop()
        if node is None or id(node) in seen:
            continue
        seen.add(id(node))
        if isinstance(node, yaml.MappingNode):
            first: dict[tuple[str, str], Any] = {}
            for key, value in node.value:
                todo.append(value)
                if isinstance(key, yaml.ScalarNode) and key.tag != _MERGE_TAG:
                    ident = (key.tag, key.value)
                    if ident in first:
                        problems.append(
                            Problem(
                                _at(filename, key.start_mark),
                                f"duplicate key {key.value!r}; it is already set on line "
                                f"{first[ident].line + 1}",
                            )
                        )
                    else:
                        first[ident] = key.start_mark
                else:
                    todo.append(key)
        elif isinstance(node, yaml.SequenceNode):
            todo.extend(node.value)
    problems.sort(key=lambda p: [int(x) for x in p.path.rsplit(":", 2)[1:]])
    return problems


def _yaml_error(
    exc: yaml.YAMLError, filename: str, text: str, limits: YamlLimits = MANIFEST_LIMITS
) -> Problem:
    if isinstance(exc, yaml.MarkedYAMLError):
        message = exc.problem or exc.context or "the text is not valid YAML"
        if exc.problem and exc.context:
            message = f"{exc.problem} ({exc.context})"
        if exc.problem and "another document" in exc.problem:
            message = f"the file holds more than one YAML document; {limits.what} is one document"
        mark = exc.problem_mark or exc.context_mark
        if _LIBYAML_TOO_DEEP in message:
            return Problem(_at(filename, mark), _too_deep(limits))
        return Problem(_at(filename, mark), f"invalid YAML: {message}")
    if isinstance(exc, yaml.reader.ReaderError):
        position = max(0, min(exc.position, len(text)))
        line = text.count("\n", 0, position) + 1
        column = position - (text.rfind("\n", 0, position) + 1) + 1
        character = exc.character
        code = ord(character) if isinstance(character, str) else character
        return Problem(
            f"{filename}:{line}:{column}",
            f"invalid YAML: the character #x{code:04x} is not allowed in YAML text",
        )
    return Problem(filename, f"invalid YAML: {exc}")


def load_manifest_yaml(data: bytes | str, filename: str) -> Loaded:
    """Parse manifest text within the manifests' limits; never raises."""
    return load_limited_yaml(data, filename, MANIFEST_LIMITS)


def load_limited_yaml(data: bytes | str, filename: str, limits: YamlLimits) -> Loaded:
    """Parse untrusted YAML text within ``limits``; never raises."""
    if isinstance(data, str):
        data = data.encode("utf-8", "surrogatepass")
    text, errors = decode_yaml_bytes(data, filename, limits)
    if text is None:
        return Loaded(None, errors)
    try:
        _check_limits(text, limits)
    except _LimitExceeded as exc:
        return Loaded(None, [Problem(_at(filename, exc.mark), exc.message)])
    except yaml.YAMLError as exc:
        return Loaded(None, [_yaml_error(exc, filename, text, limits)])
    except Exception as exc:  # libyaml or PyYAML failing in an unforeseen way
        return Loaded(None, [Problem(filename, f"invalid YAML: {exc}")])

    loader = _ManifestLoader(text)
    try:
        node = loader.get_single_node()
        duplicates = _duplicate_keys(node, filename)
        if duplicates:
            return Loaded(None, duplicates)
        document = None if node is None else loader.construct_document(node)
    except yaml.YAMLError as exc:
        return Loaded(None, [_yaml_error(exc, filename, text, limits)])
    except (ValueError, TypeError, OverflowError, RecursionError) as exc:
        if "digits" in str(exc):  # an integer with more digits than Python converts
            message = "a number has too many digits; put it in quotes if it is meant as text"
        else:
            message = f"a value cannot be read ({exc})"
        return Loaded(None, [Problem(filename, f"invalid YAML: {message}")])
    finally:
        loader.dispose()
    return Loaded(document, [])
