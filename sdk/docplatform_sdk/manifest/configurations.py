"""``configurations``: per level (account, site, space), a schema of properties (type, title,
description, default, enum, completion_url, button_text, callback_url) and ``required``, or a
``componentId``.
"""

from __future__ import annotations

import math
from typing import Any

from .base import (
    COMPONENT_ID_RE,
    IDENTIFIER_RE,
    PATH_RE,
    CheckerBase,
    hint,
    index,
    join,
    one_of,
    shown,
)
from .constants import (
    CONFIGURATION_KEYS,
    CONFIGURATION_LEVELS,
    MAX_DESCRIPTION_LENGTH,
    MAX_IDENTIFIER_LENGTH,
    MAX_LABEL_LENGTH,
    MAX_TITLE_LENGTH,
    MAX_URL_LENGTH,
    PROPERTY_KEYS,
    PROPERTY_TYPES,
)

_MISSING = object()  # a property without a default


class ConfigurationChecks(CheckerBase):
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
