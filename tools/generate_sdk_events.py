"""Write the SDK's typed events (``sdk/docplatform_sdk/events.py``) from the event catalogue.

    python tools/generate_sdk_events.py           # write the module
    python tools/generate_sdk_events.py --check   # exit 1 when the module and the catalogue differ

The SDK imports nothing of the platform, so the catalogue (``docplatform/events/catalogue.py``)
reaches it as a generated, committed module: for each platform event a class built from the
JSON Schema of the body an installation receives (``docplatform.events.schemas.body_schema``),
and the example body the API serves (``example_body``, the catalogue's sample values, the
ones ``trigger`` sends). ``tests/docplatform/test_sdk_events.py`` runs ``--check`` in CI.
"""

import argparse
import json
import keyword
import os
import sys
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TARGET = ROOT / "sdk" / "docplatform_sdk" / "events.py"
WIDTH = 100

HEADER = '''"""The platform's events, one class per event type, as handlers receive them.

GENERATED from the event catalogue (docplatform/events/catalogue.py) by
``python tools/generate_sdk_events.py``: do not edit; CI fails when the two differ.

Each class is the body an installation receives (its JSON Schema: ``GET
/api/v1/event-types/``). Fields read as attributes (``event.spaceId``) or by key; an optional
field reads None while absent; a misspelled one raises AttributeError, and a type checker
(mypy, pyright) flags it::

    from docplatform_sdk import Context
    from docplatform_sdk.events import SpaceContentUpdatedEvent

    def on_content_updated(event: SpaceContentUpdatedEvent, context: Context) -> None:
        print(event.spaceId, event.revisionId)

``EXAMPLES`` holds each type's example body (the catalogue's sample values, those ``trigger``
sends); ``docplatform_sdk.testing.sample_event`` builds an event from it.
"""

from typing import TYPE_CHECKING, Any, Literal

if TYPE_CHECKING:

    class EventObject(dict[str, Any]):
        """For type checkers: a dict whose declared fields read as attributes, no others."""

        OPTIONAL: tuple[str, ...]
        NESTED: dict[str, type["EventObject"]]

else:
    from .jsonobject import TypedObject as EventObject
'''


def class_name(event_type: str) -> str:
    return "".join(part.capitalize() for part in event_type.split("_")) + "Event"


def literal(value) -> str:
    return repr(value).replace("'", '"')


class Writer:
    """Python source for the schemas; nested objects become classes of their own."""

    def __init__(self):
        self.nested: dict[str, tuple[dict, str]] = {}  # class name -> (schema, source)

    def python_type(self, name: str, schema: dict) -> str:
        if "const" in schema:
            return f"Literal[{literal(schema['const'])}]"
        if "enum" in schema:
            return f"Literal[{', '.join(literal(value) for value in schema['enum'])}]"
        kinds = schema.get("type", "object")
        if isinstance(kinds, list):
            parts = [
                "None" if kind == "null" else self.python_type(name, schema | {"type": kind})
                for kind in kinds
            ]
            return " | ".join(parts)
        if kinds == "array":
            return f"list[{self.python_type(name, schema.get('items', {}))}]"
        if kinds == "object":
            if schema.get("properties"):
                return self.object_class(name[:1].upper() + name[1:], schema)
            extra = schema.get("additionalProperties")
            if isinstance(extra, dict) and extra:
                return f"dict[str, {self.python_type(name, extra)}]"
            return "dict[str, Any]"
        return {"string": "str", "boolean": "bool", "integer": "int", "number": "float"}.get(
            kinds, "Any"
        )

    def object_class(self, name: str, schema: dict) -> str:
        if name in self.nested:
            if self.nested[name][0] != schema:
                raise SystemExit(f"two different objects would be the class {name}")
            return name
        self.nested[name] = (schema, "")  # reserved: a recursive schema ends here
        self.nested[name] = (schema, self.class_source(name, schema, schema.get("description")))
        return name

    def class_source(self, name: str, schema: dict, description: str | None) -> str:
        required = set(schema.get("required", ()))
        lines = [f"class {name}(EventObject):"]
        lines += docstring(description or f"The ``{name}`` object.")
        optional, nested, fields = [], {}, []
        for field, field_schema in schema["properties"].items():
            if keyword.iskeyword(field) or field in dir(dict):
                raise SystemExit(f"{name}.{field} cannot be read as an attribute")
            kind = self.python_type(field, field_schema)
            if field not in required:
                optional.append(field)
                kind = kind if kind.endswith("| None") else f"{kind} | None"
            if kind in self.nested:
                nested[field] = kind
            fields += comment(field_schema.get("description"))
            fields.append(f"    {field}: {kind}")
        if optional:
            lines.append(f"    OPTIONAL = {tuple_source(optional)}")
        if nested:
            pairs = ", ".join(f'"{field}": {kind}' for field, kind in nested.items())
            lines.append(f"    NESTED = {{{pairs}}}")
        if optional or nested:
            lines.append("")
        lines += fields
        return "\n".join(lines)


def tuple_source(names: list[str]) -> str:
    inner = ", ".join(f'"{name}"' for name in names)
    text = f"({inner},)" if len(names) == 1 else f"({inner})"
    if len(text) + len("    OPTIONAL = ") <= WIDTH:
        return text
    return "(\n" + "".join(f'        "{name}",\n' for name in names) + "    )"


def docstring(text: str) -> list[str]:
    wrapped = textwrap.wrap(text, WIDTH - 4 - 6)
    if len(wrapped) == 1 and len(wrapped[0]) + 10 <= WIDTH:
        return [f'    """{wrapped[0]}"""', ""]
    body = textwrap.wrap(text, WIDTH - 4 - 3)
    body[0] = '"""' + body[0]
    return [f"    {line}" for line in body] + ['    """', ""]


def comment(text: str | None) -> list[str]:
    if not text:
        return []
    return [f"    #: {line}" for line in textwrap.wrap(text, WIDTH - 4 - 3)]


def python_value(value, indent: str = "") -> str:
    """``value`` (JSON data) as Python source in ruff's format: every non-empty dict spread
    over lines with a trailing comma, so the formatter leaves it as it is."""
    if isinstance(value, dict) and value:
        inner = indent + "    "
        items = "".join(
            f"{inner}{json.dumps(key)}: {python_value(item, inner)},\n"
            for key, item in value.items()
        )
        return "{\n" + items + indent + "}"
    if isinstance(value, list) and value:
        return "[" + ", ".join(python_value(item, indent) for item in value) + "]"
    if value is True or value is False or value is None:
        return repr(value)
    return json.dumps(value)


def render() -> str:
    """The module's source, from the catalogue as the platform serves it."""
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "docplatform.settings")
    os.environ.setdefault("DEBUG", "true")  # only the catalogue is read: no secret key needed
    sys.path[:0] = [str(ROOT), str(ROOT / "sdk")]
    import django

    django.setup()
    from docplatform_sdk.manifest import EVENT_SCOPES  # the platform's own events, not apps'

    from docplatform.events.catalogue import CATALOGUE
    from docplatform.events.schemas import body_schema, example_body

    writer = Writer()
    classes, examples = {}, {}
    for event_type in EVENT_SCOPES:
        event = CATALOGUE[event_type]
        schema = body_schema(event)
        classes[event_type] = writer.class_source(class_name(event_type), schema, event.description)
        examples[event_type] = example_body(event)
    parts = [HEADER]
    parts += [source for _, source in writer.nested.values()]
    parts += list(classes.values())
    names = [class_name(event_type) for event_type in classes]
    union = "".join(f"    | {name}\n" for name in names)[len("    | ") :]
    mapping = "".join(f'    "{event_type}": {class_name(event_type)},\n' for event_type in classes)
    parts.append(
        f"#: Any of the platform's events.\nEvent = (\n    {union})\n\n"
        f"#: Each event type's class.\nEVENT_CLASSES: dict[str, type[EventObject]] = {{\n"
        f"{mapping}}}"
    )
    example_text = python_value(examples)
    parts.append(
        "#: Each event type's example body: the catalogue's sample values.\n"
        f"EXAMPLES: dict[str, dict[str, Any]] = {example_text}"
    )
    return "\n\n\n".join(part.strip("\n") for part in parts) + "\n"


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--check", action="store_true", help="Exit 1 when the module is not up to date."
    )
    parser.add_argument(
        "--target", type=Path, default=TARGET, help="The module (default: the SDK's events.py)."
    )
    options = parser.parse_args(argv)
    target = options.target
    source = render()
    current = target.read_text() if target.exists() else ""
    if options.check:
        if current != source:
            print(
                f"{target} differs from the event catalogue: run "
                "python tools/generate_sdk_events.py",
                file=sys.stderr,
            )
            return 1
        print(f"{target} agrees with the event catalogue")
        return 0
    target.write_text(source)
    print(f"wrote {target}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
