"""The payload catalogue: one definition of each event's fields.

Every caller fires an event with its fields as keywords (``fire("space_view", ...,
spaceId=..., visitor=...)``) and the catalogue builds the payload: a missing or unknown field
is a programming error (TypeError), never a payload that differs from the specification. An
app adds the events of its own (the webhook integration's ``ping``) with ``register``.

Each field's values are described by a JSON Schema (Draft 2020-12) here too: ``FIELD_VALUES``
wherever the field appears, an event's own ``values`` where it takes other values there.
``schemas`` derives each event's body schema from them, checks fired payloads against it
(``EVENT_PAYLOAD_CHECKS``) and serves it (``/api/v1/event-types/``).
"""

from collections.abc import Mapping
from copy import deepcopy
from dataclasses import dataclass, field

from docplatform_sdk.manifest import EVENT_SCOPES as SCOPE_OF  # the SDK's: one home


@dataclass(frozen=True)
class EventType:
    """One kind of event: the scope an installation needs to receive it (None: none), where
    it happens (``space``, ``site``, or ``installation`` for an event addressed to one
    installation), the fields its payload always carries and those it carries when given,
    the JSON Schema of a field's values where they differ from ``FIELD_VALUES``, and when it
    fires (a sentence for the catalogue)."""

    name: str
    scope: str | None
    where: str
    fields: tuple[str, ...]
    optional: tuple[str, ...] = ()
    values: Mapping[str, dict] = field(default_factory=dict, hash=False)
    description: str = ""

    def __post_init__(self):
        undescribed = [
            name
            for name in (*self.fields, *self.optional)
            if name not in self.values and name not in FIELD_VALUES
        ]
        if undescribed:
            raise TypeError(f"{self.name}: no JSON Schema for the fields {undescribed}")

    def value_schema(self, name: str) -> dict:
        """The JSON Schema of the values of the field ``name`` in this event's payload."""
        return self.values.get(name) or FIELD_VALUES[name]

    def payload(self, **given) -> dict:
        """The payload (besides type, eventId and installationId), in the catalogue's order."""
        missing = [name for name in self.fields if name not in given]
        unknown = sorted(set(given) - set(self.fields) - set(self.optional))
        if missing or unknown:
            raise TypeError(
                f"{self.name}: missing fields {missing}, unknown fields {unknown}"
                if missing and unknown
                else f"{self.name}: missing fields {missing}"
                if missing
                else f"{self.name}: unknown fields {unknown}"
            )
        return {name: given[name] for name in (*self.fields, *self.optional) if name in given}

    def sample(self, **known) -> dict:
        """A realistic payload for a test event: ``known`` values (the installation's
        spaceId, siteId) where given, the catalogue's sample values for the other fields
        (``SAMPLE_VALUES``); optional fields only when known."""
        samples = SAMPLE_VALUES | EVENT_SAMPLE_VALUES.get(self.name, {})
        values = {name: known.get(name, deepcopy(samples[name])) for name in self.fields}
        values |= {name: known[name] for name in self.optional if name in known}
        return self.payload(**values)


def _id(what: str) -> dict:
    return {"type": "string", "minLength": 1, "description": f"The {what}'s id."}


def _choice(values: tuple[str, ...], description: str) -> dict:
    return {"type": "string", "enum": list(values), "description": description}


_STRINGS = {"type": "array", "items": {"type": "string"}}
#: An installation's status (``integrations``' Installation.Status: the host imports no
#: plug-in app; tests/docplatform/test_event_catalogue.py holds them equal).
INSTALLATION_STATUSES = ("pending", "active", "paused")
#: Space.Visibility's and GitSync.Direction's values (held equal to the models' by the tests:
#: the catalogue is imported before the models are).
VISIBILITIES = ("private", "unlisted", "public")
GIT_SYNC_DIRECTIONS = ("export", "import")
FEEDBACK_RATINGS = ("good", "ok", "bad")

#: The JSON Schema (Draft 2020-12) of each field's values, wherever the field appears.
FIELD_VALUES: dict[str, dict] = {
    "status": _choice(INSTALLATION_STATUSES, "The installation's status."),
    "changed": _STRINGS | {"description": "The configuration properties the edit changed."},
    "approvedScopes": _STRINGS | {"description": "The scopes an admin just approved."},
    "spaceId": _id("space"),
    "siteId": _id("site"),
    "revisionId": _id("revision"),
    "pageId": _id("page"),
    "previousVisibility": _choice(VISIBILITIES, "The space's visibility before."),
    "visibility": _choice(VISIBILITIES, "The space's visibility now."),
    "visitor": {
        "type": "object",
        "description": "Who did it.",
        "properties": {
            "anonymousId": {"type": "string", "description": "Kept in a first-party cookie."},
            "userAgent": {"type": "string"},
            "ip": {
                "type": "string",
                "anyOf": [{"format": "ipv4"}, {"format": "ipv6"}, {"maxLength": 0}],
                "description": "The client's address; empty when unknown.",
            },
            "cookies": {
                "type": "object",
                "additionalProperties": {"type": "string"},
                "description": "The site's cookies (never the platform's); may be empty.",
            },
            "userId": {
                "type": "string",
                "description": "The signed-in member reading a space (an extension), if known.",
            },
            "claims": {
                "type": "object",
                "description": "The claims of a visitor signed in on an authenticated site "
                '(README, "Visitor authentication"); only installations granted '
                "site:visitor:claims receive them.",
            },
        },
        "required": ["anonymousId", "userAgent", "ip", "cookies"],
        "additionalProperties": False,
    },
    "url": {"type": "string", "format": "uri", "description": "The page's URL."},
    "referrer": {"type": "string", "description": "The referring page's URL; empty if none."},
    "feedback": {
        "type": "object",
        "properties": {
            "rating": _choice(FEEDBACK_RATINGS, "The visitor's rating."),
            "comment": {"type": "string", "description": "Written by the visitor."},
        },
        "required": ["rating", "comment"],
        "additionalProperties": False,
    },
    "syncId": {
        "type": "string",
        "pattern": "^[0-9]+$",
        "description": "The sync: /api/v1/spaces/{spaceId}/git/syncs/{syncId}/.",
    },
    "direction": _choice(GIT_SYNC_DIRECTIONS, "export (to Git) or import (from Git)."),
    "commit": {"type": "string", "description": "The commit written or read."},
    "reason": {"type": "string", "description": "Why the sync failed."},
}

_SETUP_FIELDS = {
    "fields": ("status",),
    "optional": ("changed", "approvedScopes", "spaceId", "siteId"),
}
_VISIT = ("visitor", "url", "referrer")
#: A Git sync's events also say which sync (``/api/v1/spaces/{id}/git/syncs/{syncId}/``) and
#: which way (``export`` or ``import``); its end, the commit written or read and, when it
#: failed (``status: failed``), why (``reason``).
_GIT_SYNC_FIELDS = ("syncId", "direction")


def _builtin(name: str, where: str, fields: tuple[str, ...] = (), **more) -> EventType:
    """One of the platform's own events: the scope it needs is the SDK's (one home)."""
    return EventType(name, SCOPE_OF[name], where, fields, **more)


#: The end of each set-up event's description (Markdown, as the API docs show it).
_SETUP = "with the installation's status; on a space or site installation its `spaceId` or `siteId`"

CATALOGUE: dict[str, EventType] = {
    event.name: event
    for event in (
        _builtin(
            "installation_setup",
            "installation",
            **_SETUP_FIELDS,
            description="The integration was installed in an organization, or an edit changed "
            f"an installation's configuration (`changed`), or an admin approved new scopes "
            f"(`approvedScopes`), {_SETUP}.",
        ),
        _builtin(
            "space_installation_setup",
            "installation",
            **_SETUP_FIELDS,
            description=f"The integration was installed in a space, {_SETUP}.",
        ),
        _builtin(
            "site_installation_setup",
            "installation",
            **_SETUP_FIELDS,
            description=f"The integration was installed in a site (an extension), {_SETUP}.",
        ),
        _builtin(
            "space_view",
            "space",
            ("spaceId", "visitor"),
            description="Someone viewed a space in the platform's reader.",
        ),
        _builtin(
            "space_content_updated",
            "space",
            ("spaceId", "revisionId"),
            description="A space's content changed: its new current revision.",
        ),
        _builtin(
            "space_visibility_updated",
            "space",
            ("spaceId", "previousVisibility", "visibility"),
            description="A space's visibility changed.",
        ),
        _builtin(
            "space_gitsync_started",
            "space",
            ("spaceId", "status"),
            optional=_GIT_SYNC_FIELDS,
            values={"status": {"const": "running", "description": "The sync is running."}},
            description="A Git sync of a space began.",
        ),
        _builtin(
            "space_gitsync_completed",
            "space",
            ("spaceId", "revisionId", "status"),
            optional=(*_GIT_SYNC_FIELDS, "commit", "reason"),
            values={
                "revisionId": {
                    "type": ["string", "null"],
                    "minLength": 1,
                    "description": "The revision written (export) or made (import), else the "
                    "space's current one; null when the space has none.",
                },
                "status": _choice(("success", "failed"), "How the sync ended."),
            },
            description="A Git sync of a space ended (`reason` says why when it failed).",
        ),
        _builtin(
            "site_view",
            "site",
            ("siteId", *_VISIT),
            description="A visitor viewed a page of a published site.",
        ),
        _builtin(
            "page_feedback",
            "site",
            ("siteId", "spaceId", "pageId", "feedback", *_VISIT),
            description="A visitor rated a page of a published site.",
        ),
    )
}

#: Views of the catalogue that callers read often.
EVENT_SCOPES: dict[str, str | None] = {name: event.scope for name, event in CATALOGUE.items()}
SETUP_EVENTS = tuple(name for name, event in CATALOGUE.items() if event.where == "installation")
SPACE_EVENTS = tuple(name for name, event in CATALOGUE.items() if event.where == "space")
SITE_EVENTS = tuple(name for name, event in CATALOGUE.items() if event.where == "site")
#: The fields each platform event's payload carries besides type, eventId and installationId.
EVENT_FIELDS: dict[str, tuple[str, ...]] = {
    name: CATALOGUE[name].fields for name in SPACE_EVENTS + SITE_EVENTS
}
FEEDBACK_RATINGS = ("good", "ok", "bad")

#: Sample values of every field, for test events ("Send test event"): what the platform
#: sends in their place, with ids shaped as real ones (20 letters and digits).
SAMPLE_VALUES: dict[str, object] = {
    "status": "active",
    "spaceId": "sPaCe0000sample00001",
    "siteId": "sItE00000sample00001",
    "revisionId": "rEvIsIoN0sample00001",
    "pageId": "pAgE00000sample00001",
    "previousVisibility": "private",
    "visibility": "public",
    "visitor": {
        "anonymousId": "anon-7f3c2a9e",
        "userAgent": "Mozilla/5.0 (X11; Linux x86_64) Chrome/120.0 Safari/537.36",
        "ip": "203.0.113.7",
        "cookies": {},
    },
    "url": "https://docs.example.com/getting-started",
    "referrer": "https://www.example.com/",
    "feedback": {"rating": "good", "comment": "Clear and to the point."},
}
#: Where one event's field takes other values than the same field elsewhere.
EVENT_SAMPLE_VALUES: dict[str, dict[str, object]] = {
    "space_gitsync_started": {"status": "running"},
    "space_gitsync_completed": {"status": "success"},  # or "failed"
}


@dataclass(frozen=True)
class Visitor:
    """Who did it, as the ``visitor`` field of views and feedback carries it."""

    anonymous_id: str
    user_agent: str
    ip: str
    cookies: dict
    #: The signed-in member reading a space in the platform's reader (an extension of the
    #: specification's visitor: ``userId``, only when known).
    user_id: str | None = None
    #: A signed-in visitor's claims on an authenticated site (``claims``; for the
    #: installations granted ``site:visitor:claims`` only: ``outbox.payload_for``).
    claims: dict | None = None

    def as_payload(self) -> dict:
        payload = {
            "anonymousId": self.anonymous_id,
            "userAgent": self.user_agent,
            "ip": self.ip,
            "cookies": dict(self.cookies),
        }
        if self.user_id is not None:
            payload["userId"] = self.user_id
        if self.claims is not None:
            payload["claims"] = dict(self.claims)
        return payload


def register(event: EventType) -> None:
    """Add an app's own event type (addressed to one installation: it has no routing)."""
    if event.where != "installation":
        raise ValueError("an app's own events are addressed to one installation")
    CATALOGUE[event.name] = event


def payload(event_type: str, **fields) -> dict:
    """The payload of an ``event_type`` event with these fields (see EventType.payload)."""
    try:
        event = CATALOGUE[event_type]
    except KeyError:
        raise TypeError(f"unknown event type {event_type!r}") from None
    return event.payload(**fields)
