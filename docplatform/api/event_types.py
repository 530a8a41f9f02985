"""The event catalogue (``/api/v1/event-types/``): every event type an installation or a
webhook receiver may get, the scope it needs, where it happens, the JSON Schema (Draft
2020-12) of its body and an example body; the same schemas under the API docs' Schemas.

Open to any authenticated caller: a person (session or personal token) and a machine token
(an installation's, the runtime's): the catalogue is the same for everyone, and code that
receives events is what reads it.
"""

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import extend_schema, extend_schema_field
from rest_framework import serializers
from rest_framework.exceptions import NotFound
from rest_framework.permissions import IsAuthenticated
from rest_framework.response import Response
from rest_framework.views import APIView

from ..events.catalogue import CATALOGUE, EventType
from ..events.schemas import body_schema, example_body

WHERE = ("space", "site", "installation")


@extend_schema_field(OpenApiTypes.OBJECT)
class JsonSchemaField(serializers.JSONField):
    """A JSON Schema document (Draft 2020-12)."""


@extend_schema_field(OpenApiTypes.OBJECT)
class ExampleBodyField(serializers.JSONField):
    """An event body; the schema names each type's under Schemas (``postprocess_event_schemas``)."""


class EventTypeOutput(serializers.Serializer):
    type = serializers.CharField(source="name", help_text="The event's type (its `type` field).")
    scope = serializers.CharField(
        allow_null=True, help_text="The scope an installation needs to receive it; null: none."
    )
    where = serializers.ChoiceField(
        choices=WHERE,
        help_text="Where it happens: in a space, in a site, or to one installation (set-up "
        "events, the webhook ping).",
    )
    description = serializers.CharField(help_text="When it fires.")
    schema = JsonSchemaField(help_text="The JSON Schema (Draft 2020-12) of the body received.")
    example = ExampleBodyField(help_text="A body as received, with sample values.")


def _described(event: EventType) -> dict:
    return {
        "name": event.name,
        "scope": event.scope,
        "where": event.where,
        "description": event.description,
        "schema": body_schema(event),
        "example": example_body(event),
    }


class EventTypeListApi(APIView):
    """Every event type, with the JSON Schema of its body and an example."""

    permission_classes = [IsAuthenticated]

    @extend_schema(summary="List every event type", responses=EventTypeOutput(many=True))
    def get(self, request):
        described = [_described(event) for event in CATALOGUE.values()]
        return Response(EventTypeOutput(described, many=True).data)


class EventTypeDetailApi(APIView):
    """One event type, with the JSON Schema of its body and an example."""

    permission_classes = [IsAuthenticated]

    @extend_schema(summary="Get one event type", responses=EventTypeOutput)
    def get(self, request, event_type):
        event = CATALOGUE.get(event_type)
        if event is None:
            raise NotFound(f"No event type {event_type!r}; one of {', '.join(CATALOGUE)}.")
        return Response(EventTypeOutput(_described(event)).data)


# --- The API docs -----------------------------------------------------------------------------


def component_name(event: EventType) -> str:
    """The body's name under the API docs' Schemas: ``space_view`` -> ``SpaceViewEvent``."""
    return "".join(part.capitalize() for part in event.name.split("_")) + "Event"


def _openapi(schema):
    """A JSON Schema as OpenAPI 3.0 reads it: ``const`` as a one-value ``enum``, a type or
    null as ``nullable``, no ``$schema`` (the catalogue's schemas use nothing else 3.0 lacks)."""
    if isinstance(schema, list):
        return [_openapi(item) for item in schema]
    if not isinstance(schema, dict):
        return schema
    converted = {key: _openapi(value) for key, value in schema.items() if key != "$schema"}
    if "const" in converted:
        converted["enum"] = [converted.pop("const")]
    if isinstance(converted.get("type"), list):
        [converted["type"]] = [kind for kind in converted["type"] if kind != "null"]
        converted["nullable"] = True
    return converted


def postprocess_event_schemas(result, generator, request, public):
    """drf-spectacular postprocessing hook: each event type's body under Schemas
    (``SpaceViewEvent``, ...) with its example, and the event types' ``example`` as one of
    them."""
    schemas = result.setdefault("components", {}).setdefault("schemas", {})
    for event in CATALOGUE.values():
        schemas[component_name(event)] = _openapi(body_schema(event)) | {
            "example": example_body(event)
        }
    output = schemas.get(EventTypeOutput.__name__)
    if output:
        output["properties"]["example"] = {
            "oneOf": [
                {"$ref": f"#/components/schemas/{component_name(event)}"}
                for event in CATALOGUE.values()
            ],
            "description": output["properties"]["example"].get("description", ""),
        }
    return result
