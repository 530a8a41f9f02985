"""The manifest checker: every rule, every problem reported at once, never an exception.

Decisions (where the specification leaves a choice; the corpus of real manifests informed them):

* ``scopes`` is required but may be an empty list: 12 of the 57 real manifests are
  block-only integrations that need no permission, and forcing them to ask for one would
  grant more than they need.
* Properties need ``type``, ``title`` and ``description``, as the specification says; every
  real manifest already gives all three.
* A property's keys are exactly the specification's: ``type``, ``title``, ``description``,
  ``default``, ``enum``, ``completion_url``, ``button_text``, ``callback_url``. ``enum`` is a
  list of strings (real manifests use nothing else, ``''`` included); ``enum`` and
  ``completion_url`` cannot be combined (the options come from one or the other).
* A block has exactly ``id``, ``title``, ``description``: real manifests also carry
  ``urlUnfurl`` and ``markdown``, features this platform does not have, so they are refused
  like any unknown key rather than silently ignored.
* ``target``, ``envs`` and ``contentSecurityPolicy`` are accepted (DESIGN). ``envs`` maps an
  environment name to overrides of top-level keys; only the key names are checked and the
  values must be plain data; their secrets are never resolved. ``contentSecurityPolicy`` is a
  string, or a mapping of known CSP directive to a string.
* Secrets: with ``env`` given, a value that is exactly ``${{ env.NAME }}`` is resolved, other
  ``${{ ... }}`` expressions (such as 1Password ``op://`` references) are errors and any other
  string is a literal value. With ``env=None`` (the REST API) every ``${{ ... }}`` is an error:
  the client must send resolved values. Secret values never appear in a message.
* ``script`` must be a ``.py`` file that parses (the runtime runs Python); a ``.ts`` script of
  the other platform is refused with that reason.
* A YAML timestamp is read as a string (no field is a date).
"""

from __future__ import annotations

import copy
import difflib
import json
import math
import re
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from .. import codebundle
from . import assets as asset_checks
from . import network as network_rules
from .constants import (
    BLOCK_KEYS,
    CATEGORIES,
    CATEGORY_ALIASES,
    CONFIGURATION_KEYS,
    CONFIGURATION_LEVELS,
    CSP_DIRECTIVES,
    DEFAULT_TARGET,
    EXTERNAL_LINK_KEYS,
    INTERNAL_SCOPES,
    MANIFEST_FILENAME,
    MAX_DESCRIPTION_LENGTH,
    MAX_IDENTIFIER_LENGTH,
    MAX_LABEL_LENGTH,
    MAX_MANIFEST_BYTES,
    MAX_NAME_LENGTH,
    MAX_ORGANIZATION_LENGTH,
    MAX_PREVIEW_IMAGES,
    MAX_SECRET_BYTES,
    MAX_SUMMARY_LENGTH,
    MAX_TITLE_LENGTH,
    MAX_URL_LENGTH,
    PROPERTY_KEYS,
    PROPERTY_TYPES,
    REQUIRED_KEYS,
    SCOPES,
    TARGETS,
    TOP_LEVEL_KEYS,
    VISIBILITIES,
    human_size,
)
from .types import Asset, CheckResult, Manifest, Problem
from .yamlload import load_manifest_yaml

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

_MISSING = object()


def _never_internal(_organization: str) -> bool:
    return False


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


# --- the checker ----------------------------------------------------------------------------


class _Checker:
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

    # reporting
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

    # generic values
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

    def url_path(self, value: Any, path: str, example: str) -> str | None:
        text = self.string(value, path, max_length=MAX_URL_LENGTH)
        if text is None:
            return None
        if not PATH_RE.fullmatch(text):
            self.error(
                path,
                f"must be a path of the integration beginning with '/', such as {example!r}; "
                f"found {shown(text)}",
            )
            return None
        return text

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

    # --- the document -----------------------------------------------------------------------

    def check(self, document: Any) -> None:
        if document is None:
            self.error(
                self.filename,
                f"the manifest is empty; it needs at least {one_of(REQUIRED_KEYS)}",
            )
            return
        if not isinstance(document, dict):
            self.error(
                self.filename,
                f"the manifest must be a mapping of keys to values, found {describe(document)}",
            )
            return
        organization = document.get("organization")
        if isinstance(organization, str) and ORGANIZATION_RE.fullmatch(organization):
            self._organization = organization
        for key, value in document.items():
            if key not in TOP_LEVEL_KEYS:
                self.unknown_key(join("", key), key, TOP_LEVEL_KEYS)
                continue
            result = getattr(self, f"check_{key}")(value, key)
            if result is not None:
                self.values[key] = result
        for key in REQUIRED_KEYS:
            if key not in document:
                self.error(key, "is required")

    # top-level fields; each returns the checked value or None
    def check_name(self, value: Any, path: str) -> str | None:
        text = self.string(value, path, max_length=MAX_NAME_LENGTH)
        if text is not None and not NAME_RE.fullmatch(text):
            suggestion = ""
            if NAME_RE.fullmatch(text.lower()):
                suggestion = f"; did you mean {text.lower()!r}?"
            self.error(
                path,
                "must be lower-case letters and digits in words joined by single hyphens, "
                f"such as 'my-integration'; found {shown(text)}{suggestion}",
            )
            return None
        return text

    def check_title(self, value: Any, path: str) -> str | None:
        return self.string(value, path, max_length=MAX_TITLE_LENGTH)

    def check_description(self, value: Any, path: str) -> str | None:
        return self.string(value, path, max_length=MAX_DESCRIPTION_LENGTH)

    def check_summary(self, value: Any, path: str) -> str | None:
        return self.string(value, path, max_length=MAX_SUMMARY_LENGTH, allow_empty=True)

    def check_organization(self, value: Any, path: str) -> str | None:
        text = self.string(value, path, max_length=MAX_ORGANIZATION_LENGTH)
        if text is not None and not ORGANIZATION_RE.fullmatch(text):
            self.error(
                path,
                "must be an organization id or subdomain (letters, digits and hyphens); "
                f"found {shown(text)}",
            )
            return None
        return text

    def check_visibility(self, value: Any, path: str) -> str | None:
        return self.choice(value, path, VISIBILITIES)

    def check_target(self, value: Any, path: str) -> str | None:
        return self.choice(value, path, TARGETS)

    def is_internal(self) -> bool:
        if self._internal is None:
            self._internal = bool(
                self._organization is not None and self.organization_is_internal(self._organization)
            )
        return self._internal

    def check_scopes(self, value: Any, path: str) -> tuple[str, ...] | None:
        items = self.sequence(value, path, "a list of scopes")
        if items is None:
            return None
        scopes: list[str] = []
        first: dict[str, int] = {}
        ok = True
        for position, item in enumerate(items):
            where = index(path, position)
            scope = self.string(item, where)
            if scope is None:
                ok = False
            elif scope not in SCOPES:
                ok = False
                self.error(where, f"unknown scope {shown(scope)}{hint(scope, SCOPES)}")
            elif scope in first:
                ok = False
                self.error(
                    where, f"{scope!r} is listed twice (also at {index(path, first[scope])})"
                )
            elif scope in INTERNAL_SCOPES and not self.is_internal():
                ok = False
                first[scope] = position
                self.error(
                    where,
                    f"{scope!r} is reserved for internal platform use; only integrations of "
                    "an internal organization may request it",
                )
            else:
                first[scope] = position
                scopes.append(scope)
        return tuple(scopes) if ok else None

    def check_categories(self, value: Any, path: str) -> tuple[str, ...] | None:
        items = self.sequence(value, path, "a list of categories")
        if items is None:
            return None
        categories: list[str] = []
        first: dict[str, int] = {}
        ok = True
        for position, item in enumerate(items):
            where = index(path, position)
            category = self.string(item, where)
            if category is None:
                ok = False
            elif category not in CATEGORIES:
                ok = False
                suggestion = hint(category, CATEGORIES, CATEGORY_ALIASES)
                self.error(
                    where,
                    f"unknown category {shown(category)}{suggestion or ''}"
                    + ("" if suggestion else f"; the categories are {one_of(CATEGORIES)}"),
                )
            elif category in first:
                ok = False
                self.error(
                    where, f"{category!r} is listed twice (also at {index(path, first[category])})"
                )
            else:
                first[category] = position
                categories.append(category)
        return tuple(categories) if ok else None

    def check_blocks(self, value: Any, path: str) -> tuple[dict, ...] | None:
        items = self.sequence(value, path, "a list of blocks")
        if items is None:
            return None
        blocks: list[dict] = []
        first: dict[str, int] = {}
        ok = True
        for position, item in enumerate(items):
            where = index(path, position)
            block = self.mapping(item, where, "a mapping with id, title and description")
            if block is None:
                ok = False
                continue
            before = len(self.errors)
            self.keys(block, where, BLOCK_KEYS, BLOCK_KEYS)
            block_id = None
            if "id" in block:
                block_id = self.string(
                    block["id"], join(where, "id"), max_length=MAX_IDENTIFIER_LENGTH
                )
                if block_id is not None and not BLOCK_ID_RE.fullmatch(block_id):
                    self.error(
                        join(where, "id"),
                        "must be letters and digits in words joined by '-' or '_', such as "
                        f"'code-block'; found {shown(block_id)}",
                    )
                elif block_id is not None and block_id in first:
                    self.error(
                        join(where, "id"),
                        f"{block_id!r} is already the id of {index(path, first[block_id])}",
                    )
                elif block_id is not None:
                    first[block_id] = position
            if "title" in block:
                self.string(block["title"], join(where, "title"), max_length=MAX_TITLE_LENGTH)
            if "description" in block:
                self.string(
                    block["description"],
                    join(where, "description"),
                    max_length=MAX_DESCRIPTION_LENGTH,
                )
            if len(self.errors) > before:
                ok = False
            else:
                blocks.append({key: block[key] for key in BLOCK_KEYS})
        return tuple(blocks) if ok else None

    def check_externalLinks(self, value: Any, path: str) -> tuple[dict, ...] | None:
        items = self.sequence(value, path, "a list of links")
        if items is None:
            return None
        links: list[dict] = []
        ok = True
        for position, item in enumerate(items):
            where = index(path, position)
            link = self.mapping(item, where, "a mapping with label and url")
            if link is None:
                ok = False
                continue
            before = len(self.errors)
            self.keys(link, where, EXTERNAL_LINK_KEYS, EXTERNAL_LINK_KEYS)
            if "label" in link:
                self.string(link["label"], join(where, "label"), max_length=MAX_LABEL_LENGTH)
            if "url" in link:
                self.http_url(link["url"], join(where, "url"))
            if len(self.errors) > before:
                ok = False
            else:
                links.append({"label": link["label"], "url": link["url"]})
        return tuple(links) if ok else None

    def http_url(self, value: Any, path: str) -> str | None:
        text = self.string(value, path, max_length=MAX_URL_LENGTH)
        if text is None:
            return None
        try:
            parts = urlsplit(text)
            valid = (
                parts.scheme in ("http", "https")
                and bool(parts.hostname)
                and not re.search(r"\s", text)
            )
            parts.port  # noqa: B018 - raises ValueError on a bad port
        except ValueError:
            valid = False
        if not valid:
            self.error(
                path,
                "must be an absolute http:// or https:// URL, such as "
                f"'https://example.com/docs'; found {shown(text)}",
            )
            return None
        return text

    # files
    def check_script(self, value: Any, path: str) -> Asset | None:
        text = self.string(value, path)
        if text is None:
            return None
        script = self.collect(asset_checks.check_script(self.root, text, path))
        if script is not None and self.root is not None:
            try:
                self.values["code"] = codebundle.collect(self.root, script.path)
            except (codebundle.BundleError, OSError) as error:
                self.error(path, f"the integration's Python files: {error}")
                return None
        return script

    def check_network(self, value: Any, path: str) -> dict | None:
        network = self.mapping(value, path, "a mapping with fetch: [host names]")
        if network is None:
            return None
        before = len(self.errors)
        self.keys(network, path, network_rules.NETWORK_KEYS, ())
        hosts = self.sequence(network.get("fetch", []), join(path, "fetch"), "a list of hosts")
        if hosts is not None:
            if len(hosts) > network_rules.MAX_FETCH_HOSTS:
                self.error(join(path, "fetch"), f"at most {network_rules.MAX_FETCH_HOSTS} hosts")
            for position, host in enumerate(hosts):
                problem = network_rules.host_pattern_problem(host)
                if problem:
                    self.error(index(join(path, "fetch"), position), problem)
        if len(self.errors) != before:
            return None
        return {"fetch": tuple(dict.fromkeys(network.get("fetch", [])))}

    def check_icon(self, value: Any, path: str) -> Asset | None:
        text = self.string(value, path)
        if text is None:
            return None
        return self.collect(asset_checks.check_image(self.root, text, path, preview=False))

    def check_previewImages(self, value: Any, path: str) -> tuple[Asset, ...] | None:
        items = self.sequence(value, path, "a list of image paths")
        if items is None:
            return None
        if len(items) > MAX_PREVIEW_IMAGES:
            self.error(path, f"lists {len(items)} images; at most {MAX_PREVIEW_IMAGES} are allowed")
            return None
        images: list[Asset] = []
        ok = True
        for position, item in enumerate(items):
            where = index(path, position)
            text = self.string(item, where)
            if text is None:
                ok = False
                continue
            asset = self.collect(asset_checks.check_image(self.root, text, where, preview=True))
            if asset is None:
                ok = False
            else:
                images.append(asset)
        return tuple(images) if ok else None

    def collect(self, report: asset_checks.AssetReport) -> Asset | None:
        self.errors.extend(report.errors)
        self.warnings.extend(report.warnings)
        return report.asset

    # configurations
    def check_configurations(self, value: Any, path: str) -> dict | None:
        configurations = self.mapping(value, path, "a mapping of account, site and space")
        if configurations is None:
            return None
        normalized: dict[str, dict] = {}
        before = len(self.errors)
        for level, configuration in configurations.items():
            where = join(path, level)
            if level not in CONFIGURATION_LEVELS:
                self.unknown_key(where, level, CONFIGURATION_LEVELS)
                continue
            result = self.configuration(configuration, where)
            if result is not None:
                normalized[level] = result
        return normalized if len(self.errors) == before else None

    def configuration(self, value: Any, path: str) -> dict | None:
        configuration = self.mapping(
            value, path, "a mapping with properties (and required) or componentId"
        )
        if configuration is None:
            return None
        before = len(self.errors)
        self.keys(configuration, path, CONFIGURATION_KEYS)
        if "componentId" in configuration:
            where = join(path, "componentId")
            if "properties" in configuration or "required" in configuration:
                self.error(
                    where,
                    "cannot be combined with properties or required: the configuration is "
                    "either a component or a list of properties",
                )
            component = self.string(
                configuration["componentId"], where, max_length=MAX_IDENTIFIER_LENGTH
            )
            if component is not None and not COMPONENT_ID_RE.fullmatch(component):
                self.error(where, f"must not contain spaces; found {shown(component)}")
            if len(self.errors) > before:
                return None
            return {"componentId": component}
        if "properties" not in configuration:
            self.error(
                path,
                "needs properties (the settings to collect) or componentId (a component "
                "that renders the configuration screen)",
            )
            return None
        properties = self.properties(configuration["properties"], join(path, "properties"))
        required: list[str] = []
        if "required" in configuration:
            required = self.required(configuration["required"], join(path, "required"), properties)
        if len(self.errors) > before:
            return None
        return {"properties": properties or {}, "required": required}

    def properties(self, value: Any, path: str) -> dict | None:
        properties = self.mapping(value, path, "a mapping of property names to definitions")
        if properties is None:
            return None
        checked: dict[str, dict] = {}
        for name, definition in properties.items():
            where = join(path, name)
            if not isinstance(name, str) or not IDENTIFIER_RE.fullmatch(name):
                self.error(
                    where,
                    "a property name must be letters, digits and underscores, not starting "
                    "with a digit",
                )
            elif len(name) > MAX_IDENTIFIER_LENGTH:
                self.error(
                    where, f"a property name may be at most {MAX_IDENTIFIER_LENGTH} characters"
                )
            result = self.property(definition, where)
            if result is not None and isinstance(name, str):
                checked[name] = result
        return checked

    def required(self, value: Any, path: str, properties: dict | None) -> list[str]:
        items = self.sequence(value, path, "a list of property names")
        if items is None:
            return []
        required: list[str] = []
        first: dict[str, int] = {}
        for position, item in enumerate(items):
            where = index(path, position)
            name = self.string(item, where)
            if name is None:
                continue
            if name in first:
                self.error(where, f"{name!r} is listed twice (also at {index(path, first[name])})")
                continue
            first[name] = position
            if properties is not None and name not in properties:
                names = [key for key in properties if isinstance(key, str)]
                self.error(
                    where,
                    f"{shown(name)} is not a property of this configuration{hint(name, names)}",
                )
                continue
            required.append(name)
        return required

    def property(self, value: Any, path: str) -> dict | None:
        definition = self.mapping(value, path, "a mapping with type, title and description")
        if definition is None:
            return None
        before = len(self.errors)
        self.keys(definition, path, PROPERTY_KEYS, ("type", "title", "description"))
        kind = None
        if "type" in definition:
            kind = self.choice(definition["type"], join(path, "type"), PROPERTY_TYPES)
        if "title" in definition:
            self.string(definition["title"], join(path, "title"), max_length=MAX_TITLE_LENGTH)
        if "description" in definition:
            self.string(
                definition["description"],
                join(path, "description"),
                max_length=MAX_DESCRIPTION_LENGTH,
            )
        if kind is not None:
            self.property_extras(definition, path, kind)
        if len(self.errors) > before:
            return None
        return dict(definition)

    def property_extras(self, definition: dict, path: str, kind: str) -> None:
        for key in ("enum", "completion_url"):
            if key in definition and kind != "string":
                self.error(join(path, key), f"is only allowed on string properties, not {kind}")
        for key in ("button_text", "callback_url"):
            if key in definition and kind != "button":
                self.error(join(path, key), f"is only allowed on button properties, not {kind}")
        if kind == "button":
            if "default" in definition:
                self.error(join(path, "default"), "a button property has no default value")
            for key in ("button_text", "callback_url"):
                if key not in definition:
                    self.error(join(path, key), "is required for a button property")
            if "button_text" in definition:
                self.string(
                    definition["button_text"],
                    join(path, "button_text"),
                    max_length=MAX_LABEL_LENGTH,
                )
            if "callback_url" in definition:
                self.url_path(definition["callback_url"], join(path, "callback_url"), "/oauth")
            return
        default = definition.get("default", _MISSING)
        where = join(path, "default")
        if kind == "number" and default is not _MISSING:
            if isinstance(default, bool) or not isinstance(default, int | float):
                self.wrong_type(where, "a number", default)
            elif not math.isfinite(default):
                self.error(where, "must be a finite number")
        elif kind == "boolean" and default is not _MISSING:
            if not isinstance(default, bool):
                self.wrong_type(where, "a boolean (true or false)", default)
        elif kind == "string":
            if default is not _MISSING:
                default = self.string(default, where, allow_empty=True)
            enum = None
            if "enum" in definition:
                enum = self.enum(definition["enum"], join(path, "enum"))
            if enum is not None and isinstance(default, str) and default not in enum:
                self.error(
                    where,
                    f"{shown(default)} is not one of the enum values ({one_of(map(repr, enum))})",
                )
            if "completion_url" in definition:
                where = join(path, "completion_url")
                if "enum" in definition:
                    self.error(
                        where,
                        "cannot be combined with enum: the options come either from the fixed "
                        "list or from the endpoint",
                    )
                else:
                    self.url_path(definition["completion_url"], where, "/channels")

    def enum(self, value: Any, path: str) -> list[str] | None:
        items = self.sequence(value, path, "a list of strings")
        if items is None:
            return None
        if not items:
            self.error(path, "must list at least one option")
            return None
        options: list[str] = []
        first: dict[str, int] = {}
        ok = True
        for position, item in enumerate(items):
            where = index(path, position)
            option = self.string(item, where, allow_empty=True)
            if option is None:
                ok = False
            elif option in first:
                ok = False
                self.error(
                    where, f"{shown(option)} is listed twice (also at {index(path, first[option])})"
                )
            else:
                first[option] = position
                options.append(option)
        return options if ok else None

    # secrets
    def check_secrets(self, value: Any, path: str) -> dict[str, str] | None:
        secrets = self.mapping(value, path, "a mapping of secret names to values")
        if secrets is None:
            return None
        resolved: dict[str, str] = {}
        before = len(self.errors)
        for name, secret in secrets.items():
            where = join(path, name)
            if not isinstance(name, str) or not IDENTIFIER_RE.fullmatch(name):
                self.error(
                    where,
                    "a secret name must be letters, digits and underscores, not starting with "
                    "a digit, such as CLIENT_ID",
                )
                continue
            if not isinstance(secret, str):
                # never echo the value: it may be a secret
                self.wrong_type(where, "a string", secret)
                continue
            result = self.secret(secret, where)
            if result is not None:
                resolved[name] = result
        return resolved if len(self.errors) == before else None

    def secret(self, value: str, path: str) -> str | None:
        expression = EXPRESSION_RE.search(value)
        if self.env is None:
            if expression is not None or "${{" in value:
                shown_expression = expression.group(0) if expression else "${{ ... }}"
                self.error(
                    path,
                    f"the placeholder {shown_expression} must be resolved before upload: send "
                    "the secret's value itself",
                )
                return None
            return self._sized(value, path, "the value")
        placeholder = ENV_PLACEHOLDER_RE.fullmatch(value)
        if placeholder is not None:
            variable = placeholder.group(1)
            if variable not in self.env:
                self.error(path, f"environment variable {variable} is not set")
                return None
            resolved = self.env[variable]
            if not isinstance(resolved, str):
                self.error(path, f"environment variable {variable} does not hold text")
                return None
            if resolved == "":
                self.warn(path, f"environment variable {variable} is empty")
            return self._sized(resolved, path, f"environment variable {variable}")
        if expression is not None or "${{" in value:
            shown_expression = expression.group(0) if expression else "${{ ... }}"
            self.error(
                path,
                f"unsupported expression {shown_expression}: only ${{{{ env.NAME }}}} is "
                "supported; resolve other references (such as op:// ones) before checking",
            )
            return None
        return self._sized(value, path, "the value")

    def _sized(self, value: str, path: str, what: str) -> str | None:
        if len(value.encode("utf-8", "surrogatepass")) > MAX_SECRET_BYTES:
            self.error(path, f"{what} is longer than {MAX_SECRET_BYTES // 1024} KiB")
            return None
        return value

    # extensions accepted by DESIGN
    def check_envs(self, value: Any, path: str) -> dict | None:
        envs = self.mapping(value, path, "a mapping of environment names to manifest keys")
        if envs is None:
            return None
        before = len(self.errors)
        allowed = tuple(key for key in TOP_LEVEL_KEYS if key != "envs")
        for name, overrides in envs.items():
            where = join(path, name)
            if not isinstance(name, str) or not ENV_NAME_RE.fullmatch(name):
                self.error(
                    where,
                    "an environment name must be letters, digits, '-', '_' or '.', such as "
                    "'staging'",
                )
                continue
            overrides = self.mapping(overrides, where, "a mapping of manifest keys")
            if overrides is None:
                continue
            for key, override in overrides.items():
                if key == "envs":
                    self.error(join(where, key), "environments cannot be nested")
                elif key not in allowed:
                    self.unknown_key(join(where, key), key, allowed)
                else:
                    self.plain_data(override, join(where, key))
        return envs if len(self.errors) == before else None

    def check_contentSecurityPolicy(self, value: Any, path: str) -> dict | str | None:
        if isinstance(value, str):
            return value
        policy = self.mapping(value, path, "a string or a mapping of CSP directives to sources")
        if policy is None:
            return None
        before = len(self.errors)
        for directive, sources in policy.items():
            where = join(path, directive)
            if directive not in CSP_DIRECTIVES:
                suggestion = hint(directive, CSP_DIRECTIVES)
                self.error(
                    where,
                    f"unknown Content-Security-Policy directive{suggestion}"
                    if suggestion
                    else "unknown Content-Security-Policy directive",
                )
                continue
            self.string(sources, where, allow_empty=True)
        return dict(policy) if len(self.errors) == before else None

    # --- the result ---------------------------------------------------------------------------

    def manifest(self, document: dict) -> Manifest:
        values = self.values
        raw = redact(document)
        return Manifest(
            name=values["name"],
            title=values["title"],
            description=values["description"],
            summary=values.get("summary", ""),
            organization=values["organization"],
            visibility=values["visibility"],
            scopes=values["scopes"],
            categories=values.get("categories", ()),
            blocks=values.get("blocks", ()),
            external_links=values.get("externalLinks", ()),
            configurations=values.get("configurations", {}),
            target=values.get("target", DEFAULT_TARGET),
            script=values.get("script"),
            icon=values.get("icon"),
            preview_images=values.get("previewImages", ()),
            secrets=values.get("secrets", {}),
            raw=raw,
            envs=raw.get("envs", {}),
            content_security_policy=values.get("contentSecurityPolicy"),
            code=values.get("code"),
            network_fetch=values["network"]["fetch"] if "network" in values else None,
        )


def _redact_secrets(secrets: Any) -> Any:
    if not isinstance(secrets, dict):
        return secrets
    return {
        name: value
        if isinstance(value, str) and EXPRESSION_RE.fullmatch(value.strip())
        else REDACTED
        for name, value in secrets.items()
    }


def redact(document: dict) -> dict:
    """A deep copy of the document with every secret value replaced (placeholders kept)."""
    raw = copy.deepcopy(document)
    if "secrets" in raw:
        raw["secrets"] = _redact_secrets(raw["secrets"])
    envs = raw.get("envs")
    if isinstance(envs, dict):
        for overrides in envs.values():
            if isinstance(overrides, dict) and "secrets" in overrides:
                overrides["secrets"] = _redact_secrets(overrides["secrets"])
    return raw


# --- entry points -----------------------------------------------------------------------------


def manifest_from_text(
    text: bytes | str,
    *,
    root: Path | str | None,
    env: Mapping[str, str] | None = None,
    organization_is_internal: OrganizationCheck = _never_internal,
    filename: str = MANIFEST_FILENAME,
) -> CheckResult:
    """Check manifest text whose files live in ``root``.

    With ``root=None`` every file the manifest names (``script``, ``icon``,
    ``previewImages``) is an error "cannot be checked without the integration folder": a
    manifest is never accepted with files nobody looked at.
    """
    loaded = load_manifest_yaml(text, filename)
    if loaded.errors:
        return CheckResult(errors=loaded.errors)
    checker = _Checker(
        root=Path(root) if root is not None else None,
        env=env,
        organization_is_internal=organization_is_internal,
        filename=filename,
    )
    checker.check(loaded.document)
    result = CheckResult(errors=checker.errors, warnings=checker.warnings)
    if not result.errors:
        result.manifest = checker.manifest(loaded.document)
    return result


def check_manifest(
    path: str | Path,
    *,
    env: Mapping[str, str] | None = None,
    organization_is_internal: OrganizationCheck = _never_internal,
) -> CheckResult:
    """Check an integration: a folder holding ``service-manifest.yaml``, or a manifest file.

    The integration folder (where ``script``, ``icon`` and ``previewImages`` are looked up)
    is the folder of the manifest file. ``env`` gives the values of ``${{ env.NAME }}``
    secrets; ``None`` means "do not interpolate" (the REST API, which takes resolved values).
    ``organization_is_internal`` is asked about the manifest's organization only when it
    requests an internal scope.
    """
    try:
        location = Path(path)
        if location.is_dir():
            manifest_path = location / MANIFEST_FILENAME
            if not manifest_path.exists():
                return CheckResult(
                    errors=[Problem(MANIFEST_FILENAME, f"not found in the folder {location}")]
                )
        elif location.exists():
            manifest_path = location
        else:
            return CheckResult(
                errors=[
                    Problem(location.name or str(location), f"no such file or folder: {location}")
                ]
            )
        filename = manifest_path.name
        if not manifest_path.is_file():
            return CheckResult(errors=[Problem(filename, "is not a regular file")])
        with manifest_path.open("rb") as handle:
            data = handle.read(MAX_MANIFEST_BYTES + 1)
    except (OSError, ValueError) as exc:  # ValueError: a NUL in the path
        reason = getattr(exc, "strerror", None) or str(exc)
        return CheckResult(
            errors=[Problem(Path(str(path)).name or str(path), f"cannot be read: {reason}")]
        )
    if len(data) > MAX_MANIFEST_BYTES:
        size = manifest_path.stat().st_size if manifest_path.exists() else len(data)
        return CheckResult(
            errors=[
                Problem(
                    filename,
                    f"the file is {human_size(size)}; a manifest may be at most "
                    f"{human_size(MAX_MANIFEST_BYTES)}",
                )
            ]
        )
    return manifest_from_text(
        data,
        root=manifest_path.parent,
        env=env,
        organization_is_internal=organization_is_internal,
        filename=filename,
    )
