"""The envelope the platform sends (``POST /integrations/{name}/v1``): read, authenticate,
parse and check it, from an HTTP request (``HttpRequest``) or from a frame's fields
(``check_parts``, ``socket_server``). Every refusal is an EnvelopeError carrying the answer."""

import json
import re
from dataclasses import dataclass, field
from io import BytesIO

import multipart
from docplatform_sdk import signing
from docplatform_sdk.framing import RawJSON

from .protocol import (
    BUNDLE_HASH,
    BUNDLE_PART,
    ENVIRONMENT_PART,
    EVENT_PART,
    FETCH_BODY_PART,
    PARTS,
    REQUIRED_PARTS,
)

#: The WSGI environ key of the signature header (``signing.HEADER``).
SIGNATURE_ENVIRON = "HTTP_" + signing.HEADER.upper().replace("-", "_")
HASH_RE = re.compile(r"[0-9a-f]{64}")
OPTIONAL_OBJECTS = ("apiTokens", "secrets", "installation", "spaceInstallation", "siteInstallation")


class EnvelopeError(Exception):
    def __init__(self, status: int, body: dict):
        super().__init__(body.get("message") or body["error"])
        self.status, self.body = status, body


def _malformed(part: str | None, message: str) -> EnvelopeError:
    return EnvelopeError(400, {"error": "malformed_envelope", "part": part, "message": message})


@dataclass(frozen=True)
class Envelope:
    event: dict
    environment: dict
    fetch_body: bytes | None
    bundle: bytes | None
    #: The event and environment parts as they came (checked: each the JSON object above).
    event_json: bytes = field(repr=False)
    environment_json: bytes = field(repr=False)

    @property
    def bundle_hash(self) -> str:
        """The SHA-256 of the integration's code, as the platform signed it."""
        return self.environment["integration"][BUNDLE_HASH]

    def call(self) -> RawJSON:
        """A worker's ``call``: the event and the environment, sent as they came (checked,
        not encoded again)."""
        return RawJSON(
            b'{"event":' + self.event_json + b',"environment":' + self.environment_json + b"}"
        )


def read_body(environ: dict, limit: int) -> bytes:
    """The raw request body, refused (413) over ``limit`` bytes."""
    too_large = EnvelopeError(
        413, {"error": "envelope_too_large", "limit": limit, "message": f"over {limit} bytes"}
    )
    declared = environ.get("CONTENT_LENGTH") or ""
    if declared:
        if not declared.isdigit():
            raise _malformed(None, "the Content-Length header is not a number")
        if int(declared) > limit:
            raise too_large
        body = environ["wsgi.input"].read(int(declared))
    else:
        body = environ["wsgi.input"].read(limit + 1)
    if len(body) > limit:
        raise too_large
    return body


def authenticate(body: bytes, header: str | None, keys: list[str], tolerance: int):
    """401 unless ``header`` signs ``body`` with one of ``keys`` within ``tolerance`` seconds."""
    reasons = {
        signing.MissingSignature: "missing",
        signing.MalformedSignature: "malformed",
        signing.StaleSignature: "stale",
        signing.SignatureMismatch: "mismatch",
    }
    try:
        signing.verify(body, header, keys, tolerance=tolerance)
    except signing.SignatureError as error:
        raise EnvelopeError(
            401,
            {"error": "invalid_signature", "reason": reasons[type(error)], "message": str(error)},
        ) from error


def _read_parts(body: bytes, content_type: str) -> dict[str, bytes]:
    media_type, options = multipart.parse_options_header(content_type or "")
    if media_type != "multipart/form-data" or not options.get("boundary"):
        raise _malformed(None, "the envelope is not multipart/form-data with a boundary")
    parser = multipart.MultipartParser(
        BytesIO(body),
        options["boundary"],
        len(body),
        part_limit=len(PARTS),
        spool_limit=len(body) + 1,
        memory_limit=len(body) + 1,
    )
    parts = {}
    try:
        for part in parser:
            if part.name not in PARTS:
                raise _malformed(part.name, f"unknown part {part.name!r}; parts are {PARTS}")
            if part.name in parts:
                raise _malformed(part.name, f"the {part.name} part is given twice")
            parts[part.name] = part.raw
    except multipart.MultipartError as error:
        raise _malformed(None, f"the multipart body is malformed: {error}") from error
    return parts


def _json_object(parts: dict[str, bytes], name: str) -> dict:
    """The part's JSON object; UTF-8 alone (``json.loads`` of bytes would take UTF-16 or a
    byte order mark too), as the worker's frame carries the part as it came."""
    try:
        value = json.loads(parts[name].decode())
    except ValueError as error:  # UnicodeDecodeError among them
        raise _malformed(name, f"the {name} part is not valid JSON: {error}") from error
    if not isinstance(value, dict):
        raise _malformed(name, f"the {name} part is not a JSON object")
    return value


def _require(condition: bool, part: str, message: str):
    if not condition:
        raise _malformed(part, message)


def _check_event(event: dict):
    event_type = event.get("type")
    _require(isinstance(event_type, str) and event_type, "event", "event.type must be a string")
    if event_type in ("fetch", "visitor_authentication"):  # both carry the visitor's request
        request = event.get("request")
        _require(isinstance(request, dict), "event", "event.request must be an object")
        for key in ("method", "url"):
            _require(isinstance(request.get(key), str), "event", f"event.request.{key}: a string")
        headers = request.get("headers", {})
        _require(
            isinstance(headers, dict) and all(isinstance(v, str) for v in headers.values()),
            "event",
            "event.request.headers must be an object of strings",
        )
    elif event_type == "ui_render":
        _require(isinstance(event.get("componentId"), str), "event", "event.componentId: a string")
        for key in ("props", "action"):
            _require(isinstance(event.get(key), dict | None), "event", f"event.{key}: an object")


def _check_environment(environment: dict, integration_name: str):
    integration = environment.get("integration")
    _require(isinstance(integration, dict), "environment", "environment.integration: an object")
    _require(
        integration.get("name") == integration_name,
        "environment",
        f"environment.integration.name is not {integration_name!r}, the integration of the URL",
    )
    bundle_hash = integration.get(BUNDLE_HASH)
    _require(
        isinstance(bundle_hash, str) and HASH_RE.fullmatch(bundle_hash) is not None,
        "environment",
        "environment.integration.bundleHash must be the SHA-256 of the code (64 hex digits)",
    )
    for key in OPTIONAL_OBJECTS:
        _require(
            isinstance(environment.get(key), dict | None),
            "environment",
            f"environment.{key} must be an object",
        )


def parse(body: bytes, content_type: str, integration_name: str) -> Envelope:
    """The envelope in ``body``; 400 naming the part at fault."""
    return check_parts(_read_parts(body, content_type), integration_name)


def check_parts(parts: dict[str, bytes], integration_name: str) -> Envelope:
    """The envelope of ``parts`` (by name, as multipart's); 400 naming the part at fault."""
    for name in REQUIRED_PARTS:
        if parts.get(name) is None:
            raise _malformed(name, f"the {name} part is missing")
    event = _json_object(parts, EVENT_PART)
    _check_event(event)
    environment = _json_object(parts, ENVIRONMENT_PART)
    _check_environment(environment, integration_name)
    return Envelope(
        event,
        environment,
        parts.get(FETCH_BODY_PART),
        parts.get(BUNDLE_PART),
        parts[EVENT_PART],
        parts[ENVIRONMENT_PART],
    )


class HttpRequest:
    """An HTTP request's body or envelope, read and authenticated on demand (``host.route``
    asks for the one its path wants)."""

    def __init__(self, environ: dict, config):
        self.environ, self.config = environ, config

    def body(self) -> bytes:
        """The body, within the envelope size limit, signed with one of the host's keys."""
        body = read_body(self.environ, self.config.max_envelope_bytes)
        authenticate(
            body,
            self.environ.get(SIGNATURE_ENVIRON),
            self.config.signing_keys,
            self.config.signature_tolerance,
        )
        return body

    def envelope(self, integration_name: str) -> Envelope:
        return parse(self.body(), self.environ.get("CONTENT_TYPE", ""), integration_name)
