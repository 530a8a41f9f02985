"""Reading and checking an OpenAPI document's text: JSON or YAML (the SDK's size-limited YAML
loader, as for every YAML from outside), Swagger 2.0, OpenAPI 3.0 or 3.1, checked by
openapi-spec-validator. What is wrong is a ``ValidationError`` on the field the text came in
(``content`` or ``url``), naming where in the document (``paths./pets.get.responses``) and
what the validator said.

References are followed within the document only (``#/...``): a ``$ref`` to a file or a URL is
refused here, and the validator is given no way to fetch one, so checking a document never
reads a file of the server nor calls a network address.
"""

import json
import math
from dataclasses import dataclass

from django.core.exceptions import ValidationError
from docplatform_sdk.manifest.yamlload import YamlLimits, load_limited_yaml
from openapi_spec_validator import (
    OpenAPIV2SpecValidator,
    OpenAPIV30SpecValidator,
    OpenAPIV31SpecValidator,
)

#: Nesting and values a document may hold (a large public API's document holds about 100,000).
MAX_DEPTH = 64
MAX_NODES = 500_000
MAX_ALIASES = 10_000


@dataclass(frozen=True)
class Parsed:
    spec: dict
    format_version: str  # "2.0", "3.0.3", "3.1.0"
    size: int


def _refuse_outside_reference(uri):
    raise LookupError(f"{uri} is outside the document")


_INSIDE_ONLY = {
    scheme: _refuse_outside_reference for scheme in ("<all_urls>", "file", "http", "https")
}


class _V2(OpenAPIV2SpecValidator):
    resolver_handlers = _INSIDE_ONLY


class _V30(OpenAPIV30SpecValidator):
    resolver_handlers = _INSIDE_ONLY


class _V31(OpenAPIV31SpecValidator):
    resolver_handlers = _INSIDE_ONLY


def _path(parts) -> str:
    return ".".join(str(part) for part in parts)


class _Invalid(Exception):
    def __init__(self, message: str, path=()):
        super().__init__(message)
        self.message = message
        self.path = _path(path)


def _check_storable(text: str, path: tuple) -> None:
    """A text the database stores as it is (JSON escapes such as \\u0000 make ones it
    cannot), as the API's JSON parser requires of a request's strings."""
    if "\x00" in text:
        raise _Invalid("a text contains a NUL character", path)
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        raise _Invalid("a text contains an unpaired surrogate", path) from None


def _jsonable(value, path: tuple, depth: int = 0):
    """The parsed value as JSON keeps it: keys as strings (YAML reads ``200:`` as a number),
    no binary, set or non-finite number."""
    if depth > MAX_DEPTH:
        raise _Invalid(f"values are nested more than {MAX_DEPTH} levels deep", path)
    if isinstance(value, dict):
        result = {}
        for key, item in value.items():
            if isinstance(key, bool) or not isinstance(key, str | int | float):
                raise _Invalid(f"the key {key!r} is not text", path)
            _check_storable(str(key), path)
            result[str(key)] = _jsonable(item, (*path, key), depth + 1)
        return result
    if isinstance(value, list):
        return [_jsonable(item, (*path, index), depth + 1) for index, item in enumerate(value)]
    if isinstance(value, float) and not math.isfinite(value):
        raise _Invalid("numbers must be finite", path)
    if isinstance(value, str):
        _check_storable(value, path)
        return value
    if value is None or isinstance(value, int | float | bool):
        return value
    raise _Invalid(f"a {type(value).__name__} value has no JSON form", path)


def _parse(text: str, max_bytes: int):
    if text.lstrip().startswith(("{", "[")):
        try:
            return json.loads(text)
        except RecursionError:
            raise _Invalid(f"values are nested more than {MAX_DEPTH} levels deep") from None
        except ValueError as error:
            raise _Invalid(f"not valid JSON ({error})") from None
    limits = YamlLimits(
        max_bytes,
        max_depth=MAX_DEPTH,
        max_nodes=MAX_NODES,
        max_aliases=MAX_ALIASES,
        what="an OpenAPI document",
        holder="it",
    )
    loaded = load_limited_yaml(text, "document", limits)
    if loaded.errors:
        problem = loaded.errors[0]
        raise _Invalid(f"{problem.path}: {problem.message}")
    return loaded.document


_MISSING = object()


def resolve_pointer(root, ref: str):
    """What ``ref`` (``#/components/schemas/Pet``, JSON Pointer escapes read) points at in
    ``root``, or None when it points at nothing."""
    if not ref.startswith("#"):
        return None
    node = root
    for raw in ref[1:].split("/")[1:] if ref != "#" else []:
        part = raw.replace("~1", "/").replace("~0", "~")
        if isinstance(node, dict):
            node = node.get(part, _MISSING)
        elif isinstance(node, list) and part.isdigit() and int(part) < len(node):
            node = node[int(part)]
        else:
            return None
        if node is _MISSING:
            return None
    return node


def _check_references(value, path: tuple, root: dict):
    """Every ``$ref`` points within the document, at something there."""
    if isinstance(value, dict):
        ref = value.get("$ref")
        if isinstance(ref, str):
            if not ref.startswith("#"):
                raise _Invalid(
                    f"$ref {ref!r}: only references within the document (#/...) are followed",
                    (*path, "$ref"),
                )
            if resolve_pointer(root, ref) is None:
                raise _Invalid(f"$ref {ref!r} points at nothing in the document", (*path, "$ref"))
        for key, item in value.items():
            _check_references(item, (*path, key), root)
    elif isinstance(value, list):
        for index, item in enumerate(value):
            _check_references(item, (*path, index), root)


def _validator_for(spec: dict):
    swagger, openapi = spec.get("swagger"), spec.get("openapi")
    if swagger is not None:
        if str(swagger) != "2.0":
            raise _Invalid(f"swagger {swagger!r}: only Swagger 2.0 is read", ("swagger",))
        return _V2, "2.0"
    if not isinstance(openapi, str):
        raise _Invalid(
            'neither "openapi" (3.0 or 3.1) nor "swagger" (2.0) says which version it is'
        )
    if openapi.startswith("3.0."):
        return _V30, openapi
    if openapi.startswith("3.1."):
        return _V31, openapi
    raise _Invalid(f"openapi {openapi!r}: Swagger 2.0, OpenAPI 3.0 and 3.1 are read", ("openapi",))


def _validate(spec) -> str:
    if not isinstance(spec, dict):
        raise _Invalid("an OpenAPI document is an object (a mapping) at its top")
    spec = _jsonable(spec, ())
    validator_class, format_version = _validator_for(spec)
    _check_references(spec, (), spec)
    try:
        error = next(iter(validator_class(spec).iter_errors()), None)
    except RecursionError:
        raise _Invalid("a $ref refers to itself, through nothing but references") from None
    except Exception as failure:
        raise _Invalid(f"it cannot be checked: {failure}") from None
    if error is not None:
        message = error.message.split("\n", 1)[0]
        raise _Invalid(message, getattr(error, "absolute_path", ()))
    return format_version, spec


def parse_document(text: str, *, field: str, max_bytes: int) -> Parsed:
    """``text`` read and checked; a ValidationError on ``field`` says what is wrong, where."""
    size = len(text.encode("utf-8", "surrogatepass"))
    if size > max_bytes:
        raise ValidationError(
            {field: f"The document is {size:,} bytes; at most {max_bytes:,} are accepted."}
        )
    try:
        _check_storable(text, ())
        format_version, spec = _validate(_parse(text, max_bytes))
    except _Invalid as invalid:
        where = f"at {invalid.path}: " if invalid.path else ""
        raise ValidationError(
            {field: f"Not a valid OpenAPI document: {where}{invalid.message}"}, code="invalid"
        ) from None
    return Parsed(spec=spec, format_version=format_version, size=size)
