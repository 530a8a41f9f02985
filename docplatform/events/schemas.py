"""Each event type's JSON Schema (Draft 2020-12), derived from the catalogue's field schemas.

- ``fields_schema``: the payload ``fire`` records (the event's fields); with the setting
  ``EVENT_PAYLOAD_CHECKS`` on (tests, DEBUG), ``fire`` checks every payload against it
  (``payload_check``) before writing anything.
- ``body_schema``: the body an installation receives (``outbox.payload_for``: ``type``,
  ``eventId``, ``installationId``, then the fields), served at ``/api/v1/event-types/``
  with ``example_body`` and shown under the API docs' Schemas.
"""

from jsonschema import Draft202012Validator

from .catalogue import CATALOGUE, EventType

DIALECT = "https://json-schema.org/draft/2020-12/schema"
#: The ids an example body carries where each delivery has its own.
EXAMPLE_EVENT_ID = "5f0c7d2e-8a41-4b6e-9c3d-1e2f3a4b5c6d"
EXAMPLE_INSTALLATION_ID = "iNsTaLl0sample000001"


class EventPayloadInvalid(ValueError):
    """A payload that does not match its event type's schema; ``problems``: one sentence per
    field, the field named by its dotted path (``feedback.rating``)."""

    def __init__(self, event_type: str, problems: list[str]):
        self.event_type = event_type
        self.problems = problems
        super().__init__(f"{event_type} payload does not match its schema: {'; '.join(problems)}")

    def field_errors(self) -> dict[str, list[str]]:
        """The problems by field, as a ValidationError takes them."""
        errors: dict[str, list[str]] = {}
        for problem in self.problems:
            field, _, message = problem.partition(": ")
            errors.setdefault(field, []).append(message)
        return errors


def fields_schema(event: EventType) -> dict:
    """The schema of the event's payload: its fields, the optional ones not required."""
    names = (*event.fields, *event.optional)
    return {
        "type": "object",
        "properties": {name: event.value_schema(name) for name in names},
        "required": list(event.fields),
        "additionalProperties": False,
    }


def body_schema(event: EventType) -> dict:
    """The schema of the body an installation receives: the fields' with the envelope."""
    fields = fields_schema(event)
    return {
        "$schema": DIALECT,
        "title": event.name,
        "description": event.description,
        "type": "object",
        "properties": {
            "type": {"type": "string", "const": event.name},
            "eventId": {
                "type": "string",
                "format": "uuid",
                "description": "Made once per event and installation; the same on a retry "
                "or a redelivery: dedup by it.",
            },
            "installationId": {
                "type": "string",
                "minLength": 1,
                "description": "The installation receiving it.",
            },
            "test": {
                "type": "boolean",
                "const": True,
                "description": "Present on a sample event (`trigger`, Send test event) alone: "
                "made-up data, sent to this installation only.",
            },
            **fields["properties"],
        },
        "required": ["type", "eventId", "installationId", *fields["required"]],
        "additionalProperties": False,
    }


def example_body(event: EventType) -> dict:
    """A body of the event as an installation receives it, with the catalogue's samples."""
    return {
        "type": event.name,
        "eventId": EXAMPLE_EVENT_ID,
        "installationId": EXAMPLE_INSTALLATION_ID,
        **event.sample(),
    }


#: Compiled validators of the fields' schemas, by event type (with the EventType compiled,
#: so an event type registered again is compiled again).
_validators: dict[str, tuple[EventType, Draft202012Validator]] = {}


def _validator(event: EventType) -> Draft202012Validator:
    compiled = _validators.get(event.name)
    if compiled is None or compiled[0] is not event:
        validator = Draft202012Validator(
            fields_schema(event), format_checker=Draft202012Validator.FORMAT_CHECKER
        )
        compiled = _validators[event.name] = (event, validator)
    return compiled[1]


def payload_check(event_type: str, payload: dict) -> None:
    """Raise EventPayloadInvalid, naming each wrong field, unless ``payload`` (the fields
    ``fire`` records) matches the schema of ``event_type``."""
    problems: dict[str, None] = {}  # in order, once each
    for error in _validator(CATALOGUE[event_type]).iter_errors(payload):
        path = [str(part) for part in error.absolute_path]
        if error.validator == "required":
            missing = [name for name in error.validator_value if name not in error.instance]
            problems |= {_problem([*path, name], "is required"): None for name in missing}
        elif error.validator == "additionalProperties":
            unknown = sorted(set(error.instance) - set(error.schema.get("properties", {})))
            problems |= {_problem([*path, name], "is not a field of it"): None for name in unknown}
        else:
            problems[_problem(path, error.message)] = None
    if problems:
        raise EventPayloadInvalid(event_type, list(problems))


def _problem(path: list[str], message: str) -> str:
    return f"{'.'.join(path) or 'the payload'}: {message}"
