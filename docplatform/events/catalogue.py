"""The payload catalogue: one definition of each event's fields.

Every caller fires an event with its fields as keywords (``fire("space_view", ...,
spaceId=..., visitor=...)``) and the catalogue builds the payload: a missing or unknown field
is a programming error (TypeError), never a payload that differs from the specification. An
app adds the events of its own (the webhook integration's ``ping``) with ``register``.
"""

from copy import deepcopy
from dataclasses import dataclass

from docplatform_sdk.manifest import EVENT_SCOPES as SCOPE_OF  # the SDK's: one home


@dataclass(frozen=True)
class EventType:
    """One kind of event: the scope an installation needs to receive it (None: none), where
    it happens (``space``, ``site``, or ``installation`` for an event addressed to one
    installation), the fields its payload always carries and those it carries when given."""

    name: str
    scope: str | None
    where: str
    fields: tuple[str, ...]
    optional: tuple[str, ...] = ()

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


CATALOGUE: dict[str, EventType] = {
    event.name: event
    for event in (
        _builtin("installation_setup", "installation", **_SETUP_FIELDS),
        _builtin("space_installation_setup", "installation", **_SETUP_FIELDS),
        _builtin("site_installation_setup", "installation", **_SETUP_FIELDS),
        _builtin("space_view", "space", ("spaceId", "visitor")),
        _builtin("space_content_updated", "space", ("spaceId", "revisionId")),
        _builtin(
            "space_visibility_updated", "space", ("spaceId", "previousVisibility", "visibility")
        ),
        _builtin(
            "space_gitsync_started", "space", ("spaceId", "status"), optional=_GIT_SYNC_FIELDS
        ),
        _builtin(
            "space_gitsync_completed",
            "space",
            ("spaceId", "revisionId", "status"),
            optional=(*_GIT_SYNC_FIELDS, "commit", "reason"),
        ),
        _builtin("site_view", "site", ("siteId", *_VISIT)),
        _builtin("page_feedback", "site", ("siteId", "spaceId", "pageId", "feedback", *_VISIT)),
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

    def as_payload(self) -> dict:
        payload = {
            "anonymousId": self.anonymous_id,
            "userAgent": self.user_agent,
            "ip": self.ip,
            "cookies": dict(self.cookies),
        }
        if self.user_id is not None:
            payload["userId"] = self.user_id
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
