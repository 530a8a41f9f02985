"""UI markup as integration code answers it: plain JSON objects of known types (``block``,
``text``, ``button``, ``link``, inputs), checked before the platform shows any of it."""

from urllib.parse import urlsplit

MAX_MARKUP_DEPTH = 32
MAX_MARKUP_ELEMENTS = 1000

#: The fields each markup element type requires, and what each field must be.
MARKUP_FIELDS = {
    "block": {"children": "elements"},
    "text": {"text": "text"},
    "button": {"label": "text", "onPress": "action"},
    "link": {"label": "text", "url": "web_url"},
    "text_input": {"name": "text", "value": "text"},
    "select": {"name": "text", "options": "options"},
    "switch": {"name": "text", "value": "boolean"},
}
OPTIONAL_MARKUP_FIELDS = {
    "text_input": {"label": "text", "placeholder": "text", "onChange": "action"},
    "select": {"label": "text", "value": "scalar", "onChange": "action"},
    "switch": {"label": "text", "onChange": "action"},
}


def is_action(value) -> bool:
    """Whether ``value`` is an action object: ``{"action": "<name>", ...}``."""
    return (
        isinstance(value, dict) and isinstance(value.get("action"), str) and bool(value["action"])
    )


def markup_problem(root) -> str | None:
    """Why ``root`` is not UI markup (elements of known types, fields of the right kind)."""
    pending = [(root, "element", 1)]
    seen = 0
    while pending:
        element, path, depth = pending.pop()
        seen += 1
        if seen > MAX_MARKUP_ELEMENTS:
            return f"more than {MAX_MARKUP_ELEMENTS} elements"
        if depth > MAX_MARKUP_DEPTH:
            return f"{path} is nested deeper than {MAX_MARKUP_DEPTH} levels"
        if not isinstance(element, dict):
            return f"{path} must be an object with a type"
        kind = element.get("type")
        if kind not in MARKUP_FIELDS:
            known = ", ".join(MARKUP_FIELDS)
            return f"{path} has the unknown type {kind!r} (known: {known})"
        required = MARKUP_FIELDS[kind]
        optional = OPTIONAL_MARKUP_FIELDS.get(kind, {})
        for field, rule in {**required, **optional}.items():
            if field not in element:
                if field in required:
                    return f"{path} ({kind}) needs {field}"
                continue
            problem = _field_problem(element[field], rule)
            if problem:
                return f"{path}.{field} {problem}"
        if kind == "block":
            pending.extend(
                (child, f"{path}.children[{position}]", depth + 1)
                for position, child in enumerate(element["children"])
            )
    return None


def _field_problem(value, rule: str) -> str | None:
    if rule == "text" and not isinstance(value, str):
        return "must be a string"
    if rule == "boolean" and not isinstance(value, bool):
        return "must be true or false"
    if rule == "scalar" and not _is_scalar(value):
        return "must be a string, a number or null"
    if rule == "elements" and not isinstance(value, list):
        return "must be a list of elements"
    if rule == "action" and not is_action(value):
        return 'must be an object like {"action": "<name>"}'
    if rule == "web_url" and not (
        isinstance(value, str) and urlsplit(value).scheme in ("http", "https")
    ):
        return "must be an http or https URL"
    if rule == "options" and not (
        isinstance(value, list)
        and all(
            isinstance(option, dict)
            and _is_scalar(option.get("value"))
            and option.get("value") is not None
            and isinstance(option.get("label"), str)
            for option in value
        )
    ):
        return "must be a list of {value, label} objects"
    return None


def _is_scalar(value) -> bool:
    return value is None or isinstance(value, str | int | float)
