"""One operation of a parsed OpenAPI document as plain data for the OpenAPI operation block:
its method, path, summary, parameters, request body and responses with their schemas and
examples. Swagger 2.0's body parameters and response schemas are read as OpenAPI 3's request
bodies and contents.

References (``$ref``) are followed within the document only (``specs.resolve_pointer``), at
most ``MAX_DEPTH`` levels of a schema deep and ``MAX_ROWS`` rows per schema; a schema that
contains itself is shown once, then named ("recursive"). Everything here is the document's
text: the template escapes it.
"""

import json
from dataclasses import dataclass, field

from .specs import resolve_pointer

METHODS = ("get", "put", "post", "delete", "options", "head", "patch", "trace")
MAX_DEPTH = 6
MAX_ROWS = 200
MAX_EXAMPLE_CHARS = 4000
MAX_REF_HOPS = 32


@dataclass
class SchemaRow:
    name: str
    depth: int
    type: str
    required: bool = False
    description: str = ""


@dataclass
class Content:
    media_type: str
    rows: list[SchemaRow] = field(default_factory=list)
    example: str = ""


@dataclass
class Parameter:
    name: str
    location: str
    required: bool
    type: str
    description: str = ""
    example: str = ""


@dataclass
class Response:
    status: str
    description: str
    contents: list[Content] = field(default_factory=list)


@dataclass
class Operation:
    method: str
    path: str
    operation_id: str
    summary: str
    description: str
    deprecated: bool
    parameters: list[Parameter]
    request_body: list[Content]
    request_required: bool
    request_description: str
    responses: list[Response]
    title: str
    version: str


def deref(spec: dict, value):
    """``value`` with its chain of ``$ref`` followed (bounded; a broken or looping chain is
    an empty object)."""
    for _ in range(MAX_REF_HOPS):
        if not (isinstance(value, dict) and isinstance(value.get("$ref"), str)):
            return value
        value = resolve_pointer(spec, value["$ref"])
    return {} if isinstance(value, dict) and "$ref" in value else (value or {})


def _text(value) -> str:
    return value if isinstance(value, str) else ""


def _example(value) -> str:
    text = value if isinstance(value, str) else json.dumps(value, indent=2, ensure_ascii=False)
    return text if len(text) <= MAX_EXAMPLE_CHARS else text[:MAX_EXAMPLE_CHARS] + "\n…"


def _ref_name(value) -> str:
    ref = value.get("$ref") if isinstance(value, dict) else None
    return ref.rsplit("/", 1)[-1] if isinstance(ref, str) else ""


def type_label(spec: dict, schema, depth: int = 0) -> str:
    """A schema's type in a few words: ``integer (int64)``, ``array of Pet``, ``Pet``,
    ``string, one of: a, b``."""
    name = _ref_name(schema)
    if depth > 3:  # an array of arrays of ...: a schema may contain itself
        return name or "…"
    schema = deref(spec, schema)
    if not isinstance(schema, dict):
        return ""
    kind = schema.get("type")
    if isinstance(kind, list):
        kind = " or ".join(str(k) for k in kind)
    label = str(kind) if kind else ""
    if label == "array" or ("items" in schema and not label):
        items = schema.get("items")
        of = type_label(spec, items, depth + 1) if items else ""
        label = f"array of {of or 'anything'}" if items else "array"
    elif name:
        label = name
    for combiner in ("oneOf", "anyOf", "allOf"):
        options = schema.get(combiner)
        if isinstance(options, list) and options and not label:
            joined = ", ".join(
                type_label(spec, option, depth + 1) or "object" for option in options[:5]
            )
            label = f"{combiner} {joined}"
    if schema.get("format"):
        label += f" ({schema['format']})"
    if schema.get("nullable"):
        label += ", nullable"
    if isinstance(schema.get("enum"), list):
        values = ", ".join(str(value) for value in schema["enum"][:10])
        label += f", one of: {values}"
    return label.strip(", ") or "object"


def schema_rows(spec: dict, schema) -> list[SchemaRow]:
    """The schema's properties, nested ones indented (``depth``), bounded and cycle-safe."""
    rows: list[SchemaRow] = []

    def walk(node, depth: int, seen: tuple[str, ...]):
        name = _ref_name(node)
        if name and name in seen:
            return
        if name:
            seen = (*seen, name)
        node = deref(spec, node)
        if not isinstance(node, dict) or depth > MAX_DEPTH:
            return
        if node.get("type") == "array" and isinstance(node.get("items"), dict):
            walk(node["items"], depth, seen)
            return
        for combined in node.get("allOf") or []:
            walk(combined, depth, seen)
        properties = node.get("properties")
        if not isinstance(properties, dict):
            return
        required = node.get("required") if isinstance(node.get("required"), list) else []
        for prop_name, prop in properties.items():
            if len(rows) >= MAX_ROWS:
                return
            prop_ref = _ref_name(prop)
            label = type_label(spec, prop)
            recursive = bool(prop_ref) and prop_ref in seen
            resolved = deref(spec, prop)
            item_ref = _ref_name(resolved.get("items")) if isinstance(resolved, dict) else ""
            recursive = recursive or (bool(item_ref) and item_ref in seen)
            rows.append(
                SchemaRow(
                    name=str(prop_name),
                    depth=depth,
                    type=label + (" (recursive)" if recursive else ""),
                    required=prop_name in required,
                    description=_text(resolved.get("description")),
                )
            )
            if not recursive:
                walk(prop, depth + 1, seen)

    walk(schema, 0, ())
    return rows


def _content(spec: dict, media_type: str, media) -> Content:
    media = deref(spec, media)
    schema = media.get("schema") if isinstance(media, dict) else None
    example = ""
    if isinstance(media, dict) and "example" in media:
        example = _example(media["example"])
    elif isinstance(media, dict) and isinstance(media.get("examples"), dict):
        for named in media["examples"].values():
            named = deref(spec, named)
            if isinstance(named, dict) and "value" in named:
                example = _example(named["value"])
                break
    if not example and schema is not None:
        resolved = deref(spec, schema)
        if isinstance(resolved, dict) and "example" in resolved:
            example = _example(resolved["example"])
    return Content(
        media_type=str(media_type),
        rows=schema_rows(spec, schema) if schema is not None else [],
        example=example,
    )


def _contents(spec: dict, content) -> list[Content]:
    if not isinstance(content, dict):
        return []
    return [_content(spec, media_type, media) for media_type, media in content.items()]


def _parameter(spec: dict, raw) -> Parameter | None:
    parameter = deref(spec, raw)
    if not isinstance(parameter, dict) or not parameter.get("name"):
        return None
    schema = parameter.get("schema", parameter)  # Swagger 2.0: the type is on the parameter
    example = ""
    if "example" in parameter:
        example = _example(parameter["example"])
    return Parameter(
        name=str(parameter["name"]),
        location=str(parameter.get("in", "")),
        required=bool(parameter.get("required")),
        type=type_label(spec, schema),
        description=_text(parameter.get("description")),
        example=example,
    )


def find_operation(spec: dict, *, operation: str = "", operation_id: str = ""):
    """(method, path, path item, operation object) named by ``operation`` (``GET /pets``) or
    ``operation_id``; None when the document has no such operation."""
    paths = spec.get("paths") if isinstance(spec.get("paths"), dict) else {}
    if operation:
        method, _, path = operation.strip().partition(" ")
        item = deref(spec, paths.get(path.strip()))
        found = item.get(method.lower()) if isinstance(item, dict) else None
        if method.lower() in METHODS and isinstance(found, dict):
            return method.lower(), path.strip(), item, found
        return None
    for path, item in paths.items():
        item = deref(spec, item)
        if not isinstance(item, dict):
            continue
        for method in METHODS:
            found = item.get(method)
            if isinstance(found, dict) and found.get("operationId") == operation_id:
                return method, path, item, found
    return None


def operation_of(spec: dict, *, operation: str = "", operation_id: str = "") -> Operation | None:
    found = find_operation(spec, operation=operation, operation_id=operation_id)
    if found is None:
        return None
    method, path, item, op = found
    swagger = "swagger" in spec
    raw_parameters = [*(item.get("parameters") or []), *(op.get("parameters") or [])]
    by_key: dict[tuple, object] = {}
    for raw in raw_parameters:  # an operation's parameter overrides its path's of that name
        resolved = deref(spec, raw)
        if isinstance(resolved, dict):
            by_key[(resolved.get("name"), resolved.get("in"))] = raw
    parameters, request_body, request_required, request_description = [], [], False, ""
    for raw in by_key.values():
        resolved = deref(spec, raw)
        if swagger and resolved.get("in") == "body":
            consumes = op.get("consumes") or spec.get("consumes") or ["application/json"]
            request_body = [_content(spec, consumes[0], {"schema": resolved.get("schema", {})})]
            request_required = bool(resolved.get("required"))
            request_description = _text(resolved.get("description"))
            continue
        parameter = _parameter(spec, raw)
        if parameter is not None:
            parameters.append(parameter)
    body = deref(spec, op.get("requestBody"))
    if isinstance(body, dict) and body:
        request_body = _contents(spec, body.get("content"))
        request_required = bool(body.get("required"))
        request_description = _text(body.get("description"))
    responses = []
    raw_responses = op.get("responses") if isinstance(op.get("responses"), dict) else {}
    produces = op.get("produces") or spec.get("produces") or ["application/json"]
    for status, raw in raw_responses.items():
        response = deref(spec, raw)
        if not isinstance(response, dict):
            continue
        if swagger:
            contents = []
            if "schema" in response or "examples" in response:
                media = {"schema": response.get("schema", {})}
                examples = response.get("examples")
                if isinstance(examples, dict) and examples:
                    media["example"] = next(iter(examples.values()))
                contents = [_content(spec, produces[0], media)]
        else:
            contents = _contents(spec, response.get("content"))
        responses.append(Response(str(status), _text(response.get("description")), contents))
    info = spec.get("info") if isinstance(spec.get("info"), dict) else {}
    return Operation(
        method=method.upper(),
        path=path,
        operation_id=_text(op.get("operationId")),
        summary=_text(op.get("summary")),
        description=_text(op.get("description")),
        deprecated=bool(op.get("deprecated")),
        parameters=parameters,
        request_body=request_body,
        request_required=request_required,
        request_description=request_description,
        responses=responses,
        title=_text(info.get("title")),
        version=_text(info.get("version")),
    )


def operations_list(spec: dict) -> list[tuple[str, str, str, str]]:
    """Every operation of the document: (method, path, operationId, summary)."""
    found = []
    paths = spec.get("paths") if isinstance(spec.get("paths"), dict) else {}
    for path, item in paths.items():
        item = deref(spec, item)
        if not isinstance(item, dict):
            continue
        for method in METHODS:
            op = item.get(method)
            if isinstance(op, dict):
                found.append(
                    (method.upper(), path, _text(op.get("operationId")), _text(op.get("summary")))
                )
    return found
