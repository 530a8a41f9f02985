"""The OpenAPI schema declares every 400 the API really answers (``/api/schema/``).

drf-standardized-errors declares the validation errors of request bodies. This adds:

- the query parameters a view validates: the serializers it names in
  ``extend_schema(parameters=[...])``, and the page window (``limit``, ``offset``) of a
  paginated list, so their 400s are declared like a body's;
- errors a service raises: ``@service_errors("status")`` on the view (the package's
  ``extend_validation_errors``), whose ``attr`` may name a path with placeholders: ``INDEX``
  for a list position (the package's own) and ``KEY`` for any object key
  (``configuration.KEY``).

``postprocess_error_attrs`` then turns an ``attr`` with a placeholder into a pattern
(``pages.INDEX.path`` matches ``pages.3.path``), so a real error body validates against the
schema.

Operations are grouped by resource: each app registers its tags (``register_api_tag``: a name,
what it holds, the API paths it covers) and every operation takes the tag whose pattern
matches most of its path; ``postprocess_tags`` lists them in the schema in the order registered.
"""

import re
from dataclasses import dataclass

from drf_standardized_errors.openapi import AutoSchema as StandardizedErrorsAutoSchema
from drf_standardized_errors.openapi_utils import (
    get_flat_serializer_fields,
    get_serializer_fields_with_error_codes,
)
from drf_standardized_errors.openapi_validation_errors import extend_validation_errors
from rest_framework import serializers

from .inputs import QueryParameters


@dataclass(frozen=True)
class ApiTag:
    name: str
    description: str
    paths: tuple[re.Pattern, ...]


_tags: list[ApiTag] = []


def register_api_tag(name: str, description: str, *paths: str) -> None:
    """Group the operations whose path (below ``/api/v1/``, e.g. ``spaces/{space_id}/git/``)
    matches one of ``paths`` (regular expressions, matched from the start) under ``name``.
    The most specific match wins: the pattern matching the longest part of the path."""
    _tags.append(ApiTag(name, description, tuple(re.compile(path) for path in paths)))


def api_tag_for(path: str) -> str | None:
    relative = path.removeprefix("/api/v1/")
    matches = [
        (match.end(), tag.name)
        for tag in _tags
        for pattern in tag.paths
        if (match := pattern.match(relative))
    ]
    return max(matches)[1] if matches else None


def postprocess_tags(result, generator, request, public):
    """drf-spectacular postprocessing hook: the registered tags, with their descriptions."""
    used = {tag for ops in result.get("paths", {}).values() for op in ops.values()
            for tag in op.get("tags", [])}  # fmt: skip
    result["tags"] = [
        {"name": tag.name, "description": tag.description} for tag in _tags if tag.name in used
    ]
    return result


#: Placeholders of an ``attr`` path and what each stands for.
PLACEHOLDERS = {"INDEX": "[0-9]+", "KEY": r"[\s\S]*"}
SEPARATOR = "."


def service_errors(*attrs: str, codes=("invalid",), methods=None):
    """Declare the validation errors a view's services raise, by ``attr``: a service's
    ``ValidationError({"status": [...]})`` answers ``{"attr": "status", "code": "invalid"}``
    (``docplatform.api.errors``)."""

    def decorate(view):
        for attr in attrs:
            view = extend_validation_errors(list(codes), field_name=attr, methods=methods)(view)
        return view

    return decorate


def _class_of(serializer) -> type:
    return serializer if isinstance(serializer, type) else type(serializer)


def _is_serializer(value) -> bool:
    return isinstance(value, serializers.Serializer) or (
        isinstance(value, type) and issubclass(value, serializers.Serializer)
    )


class AutoSchema(StandardizedErrorsAutoSchema):
    def get_tags(self) -> list[str]:
        tag = api_tag_for(self.path)
        return [tag] if tag else super().get_tags()

    def _query_serializers(self) -> list:
        """The serializers that validate this operation's query parameters."""
        found = [
            parameter for parameter in self.get_override_parameters() if _is_serializer(parameter)
        ]
        paginator = self._get_paginator()
        window = getattr(paginator, "window_serializer", None)
        if self._is_list_view() and window is not None:
            found.append(window)
        return found

    def _should_add_validation_error_response(self) -> bool:
        return super()._should_add_validation_error_response() or bool(
            self.method == "GET" and self._query_serializers()
        )

    def _determine_fields_with_error_codes(self):
        if self.method in ("PUT", "PATCH", "POST") and not _is_serializer(
            self.get_request_serializer()
        ):
            return []  # a body declared as a plain type: only the errors declared by name
        fields = super()._determine_fields_with_error_codes()
        if self.method == "GET":
            for serializer in self._query_serializers():
                flat = get_flat_serializer_fields(serializer)
                declared = get_serializer_fields_with_error_codes(flat)
                if issubclass(_class_of(serializer), QueryParameters):
                    for field in declared:
                        if field.name in _class_of(serializer)._declared_fields:
                            field.error_codes.add("blank")  # given empty
                fields.extend(declared)
        return fields


def attr_pattern(attr: str) -> str | None:
    """The regular expression an ``attr`` with placeholders stands for, or None."""
    parts = attr.split(SEPARATOR)
    if not any(part in PLACEHOLDERS for part in parts):
        return None
    return (
        "^"
        + re.escape(SEPARATOR).join(PLACEHOLDERS.get(part, re.escape(part)) for part in parts)
        + "$"
    )


def postprocess_error_attrs(result, generator, request, public):
    """drf-spectacular postprocessing hook: error ``attr`` placeholders become patterns, and
    an error list whose entries they describe is matched by ``anyOf`` (a pattern is no
    discriminator value)."""
    schemas = result.get("components", {}).get("schemas", {})
    for schema in schemas.values():
        attr = schema.get("properties", {}).get("attr", {})
        values = attr.get("enum") or []
        if len(values) == 1 and isinstance(values[0], str) and attr_pattern(values[0]):
            schema["properties"]["attr"] = {
                "type": "string",
                "pattern": attr_pattern(values[0]),
                "description": f"`{values[0]}`: {', '.join(PLACEHOLDERS)} stand for any "
                "list position or object key",
            }
        discriminator = schema.get("discriminator", {})
        if discriminator.get("propertyName") == "attr" and any(
            attr_pattern(value) for value in discriminator.get("mapping", {})
        ):
            del schema["discriminator"]
            schema["anyOf"] = schema.pop("oneOf")
    return result
