"""The platform's events, one class per event type, as handlers receive them.

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


class Visitor(EventObject):
    """Who did it."""

    OPTIONAL = ("userId", "claims")

    #: Kept in a first-party cookie.
    anonymousId: str
    userAgent: str
    #: The client's address; empty when unknown.
    ip: str
    #: The site's cookies (never the platform's); may be empty.
    cookies: dict[str, str]
    #: The signed-in member reading a space (an extension), if known.
    userId: str | None
    #: The claims of a visitor signed in on an authenticated site (README, "Visitor
    #: authentication"); only installations granted site:visitor:claims receive them.
    claims: dict[str, Any] | None


class Feedback(EventObject):
    """The ``Feedback`` object."""

    #: The visitor's rating.
    rating: Literal["good", "ok", "bad"]
    #: Written by the visitor.
    comment: str


class InstallationSetupEvent(EventObject):
    """The integration was installed in an organization, or an edit changed an installation's
    configuration (`changed`), or an admin approved new scopes (`approvedScopes`), with the
    installation's status; on a space or site installation its `spaceId` or `siteId`.
    """

    OPTIONAL = ("test", "changed", "approvedScopes", "spaceId", "siteId")

    type: Literal["installation_setup"]
    #: Made once per event and installation; the same on a retry or a redelivery: dedup by it.
    eventId: str
    #: The installation receiving it.
    installationId: str
    #: Present on a sample event (`trigger`, Send test event) alone: made-up data, sent to this
    #: installation only.
    test: Literal[True] | None
    #: The installation's status.
    status: Literal["pending", "active", "paused"]
    #: The configuration properties the edit changed.
    changed: list[str] | None
    #: The scopes an admin just approved.
    approvedScopes: list[str] | None
    #: The space's id.
    spaceId: str | None
    #: The site's id.
    siteId: str | None


class SpaceInstallationSetupEvent(EventObject):
    """The integration was installed in a space, with the installation's status; on a space or site
    installation its `spaceId` or `siteId`.
    """

    OPTIONAL = ("test", "changed", "approvedScopes", "spaceId", "siteId")

    type: Literal["space_installation_setup"]
    #: Made once per event and installation; the same on a retry or a redelivery: dedup by it.
    eventId: str
    #: The installation receiving it.
    installationId: str
    #: Present on a sample event (`trigger`, Send test event) alone: made-up data, sent to this
    #: installation only.
    test: Literal[True] | None
    #: The installation's status.
    status: Literal["pending", "active", "paused"]
    #: The configuration properties the edit changed.
    changed: list[str] | None
    #: The scopes an admin just approved.
    approvedScopes: list[str] | None
    #: The space's id.
    spaceId: str | None
    #: The site's id.
    siteId: str | None


class SiteInstallationSetupEvent(EventObject):
    """The integration was installed in a site (an extension), with the installation's status; on a
    space or site installation its `spaceId` or `siteId`.
    """

    OPTIONAL = ("test", "changed", "approvedScopes", "spaceId", "siteId")

    type: Literal["site_installation_setup"]
    #: Made once per event and installation; the same on a retry or a redelivery: dedup by it.
    eventId: str
    #: The installation receiving it.
    installationId: str
    #: Present on a sample event (`trigger`, Send test event) alone: made-up data, sent to this
    #: installation only.
    test: Literal[True] | None
    #: The installation's status.
    status: Literal["pending", "active", "paused"]
    #: The configuration properties the edit changed.
    changed: list[str] | None
    #: The scopes an admin just approved.
    approvedScopes: list[str] | None
    #: The space's id.
    spaceId: str | None
    #: The site's id.
    siteId: str | None


class SpaceViewEvent(EventObject):
    """Someone viewed a space in the platform's reader."""

    OPTIONAL = ("test",)
    NESTED = {"visitor": Visitor}

    type: Literal["space_view"]
    #: Made once per event and installation; the same on a retry or a redelivery: dedup by it.
    eventId: str
    #: The installation receiving it.
    installationId: str
    #: Present on a sample event (`trigger`, Send test event) alone: made-up data, sent to this
    #: installation only.
    test: Literal[True] | None
    #: The space's id.
    spaceId: str
    #: Who did it.
    visitor: Visitor


class SpaceContentUpdatedEvent(EventObject):
    """A space's content changed: its new current revision."""

    OPTIONAL = ("test",)

    type: Literal["space_content_updated"]
    #: Made once per event and installation; the same on a retry or a redelivery: dedup by it.
    eventId: str
    #: The installation receiving it.
    installationId: str
    #: Present on a sample event (`trigger`, Send test event) alone: made-up data, sent to this
    #: installation only.
    test: Literal[True] | None
    #: The space's id.
    spaceId: str
    #: The revision's id.
    revisionId: str


class SpaceVisibilityUpdatedEvent(EventObject):
    """A space's visibility changed."""

    OPTIONAL = ("test",)

    type: Literal["space_visibility_updated"]
    #: Made once per event and installation; the same on a retry or a redelivery: dedup by it.
    eventId: str
    #: The installation receiving it.
    installationId: str
    #: Present on a sample event (`trigger`, Send test event) alone: made-up data, sent to this
    #: installation only.
    test: Literal[True] | None
    #: The space's id.
    spaceId: str
    #: The space's visibility before.
    previousVisibility: Literal["private", "unlisted", "public"]
    #: The space's visibility now.
    visibility: Literal["private", "unlisted", "public"]


class SpaceGitsyncStartedEvent(EventObject):
    """A Git sync of a space began."""

    OPTIONAL = ("test", "syncId", "direction")

    type: Literal["space_gitsync_started"]
    #: Made once per event and installation; the same on a retry or a redelivery: dedup by it.
    eventId: str
    #: The installation receiving it.
    installationId: str
    #: Present on a sample event (`trigger`, Send test event) alone: made-up data, sent to this
    #: installation only.
    test: Literal[True] | None
    #: The space's id.
    spaceId: str
    #: The sync is running.
    status: Literal["running"]
    #: The sync: /api/v1/spaces/{spaceId}/git/syncs/{syncId}/.
    syncId: str | None
    #: export (to Git) or import (from Git).
    direction: Literal["export", "import"] | None


class SpaceGitsyncCompletedEvent(EventObject):
    """A Git sync of a space ended (`reason` says why when it failed)."""

    OPTIONAL = ("test", "syncId", "direction", "commit", "reason")

    type: Literal["space_gitsync_completed"]
    #: Made once per event and installation; the same on a retry or a redelivery: dedup by it.
    eventId: str
    #: The installation receiving it.
    installationId: str
    #: Present on a sample event (`trigger`, Send test event) alone: made-up data, sent to this
    #: installation only.
    test: Literal[True] | None
    #: The space's id.
    spaceId: str
    #: The revision written (export) or made (import), else the space's current one; null when the
    #: space has none.
    revisionId: str | None
    #: How the sync ended.
    status: Literal["success", "failed"]
    #: The sync: /api/v1/spaces/{spaceId}/git/syncs/{syncId}/.
    syncId: str | None
    #: export (to Git) or import (from Git).
    direction: Literal["export", "import"] | None
    #: The commit written or read.
    commit: str | None
    #: Why the sync failed.
    reason: str | None


class SiteViewEvent(EventObject):
    """A visitor viewed a page of a published site."""

    OPTIONAL = ("test",)
    NESTED = {"visitor": Visitor}

    type: Literal["site_view"]
    #: Made once per event and installation; the same on a retry or a redelivery: dedup by it.
    eventId: str
    #: The installation receiving it.
    installationId: str
    #: Present on a sample event (`trigger`, Send test event) alone: made-up data, sent to this
    #: installation only.
    test: Literal[True] | None
    #: The site's id.
    siteId: str
    #: Who did it.
    visitor: Visitor
    #: The page's URL.
    url: str
    #: The referring page's URL; empty if none.
    referrer: str


class PageFeedbackEvent(EventObject):
    """A visitor rated a page of a published site."""

    OPTIONAL = ("test",)
    NESTED = {"feedback": Feedback, "visitor": Visitor}

    type: Literal["page_feedback"]
    #: Made once per event and installation; the same on a retry or a redelivery: dedup by it.
    eventId: str
    #: The installation receiving it.
    installationId: str
    #: Present on a sample event (`trigger`, Send test event) alone: made-up data, sent to this
    #: installation only.
    test: Literal[True] | None
    #: The site's id.
    siteId: str
    #: The space's id.
    spaceId: str
    #: The page's id.
    pageId: str
    feedback: Feedback
    #: Who did it.
    visitor: Visitor
    #: The page's URL.
    url: str
    #: The referring page's URL; empty if none.
    referrer: str


#: Any of the platform's events.
Event = (
    InstallationSetupEvent
    | SpaceInstallationSetupEvent
    | SiteInstallationSetupEvent
    | SpaceViewEvent
    | SpaceContentUpdatedEvent
    | SpaceVisibilityUpdatedEvent
    | SpaceGitsyncStartedEvent
    | SpaceGitsyncCompletedEvent
    | SiteViewEvent
    | PageFeedbackEvent
)

#: Each event type's class.
EVENT_CLASSES: dict[str, type[EventObject]] = {
    "installation_setup": InstallationSetupEvent,
    "space_installation_setup": SpaceInstallationSetupEvent,
    "site_installation_setup": SiteInstallationSetupEvent,
    "space_view": SpaceViewEvent,
    "space_content_updated": SpaceContentUpdatedEvent,
    "space_visibility_updated": SpaceVisibilityUpdatedEvent,
    "space_gitsync_started": SpaceGitsyncStartedEvent,
    "space_gitsync_completed": SpaceGitsyncCompletedEvent,
    "site_view": SiteViewEvent,
    "page_feedback": PageFeedbackEvent,
}


#: Each event type's example body: the catalogue's sample values.
EXAMPLES: dict[str, dict[str, Any]] = {
    "installation_setup": {
        "type": "installation_setup",
        "eventId": "5f0c7d2e-8a41-4b6e-9c3d-1e2f3a4b5c6d",
        "installationId": "iNsTaLl0sample000001",
        "status": "active",
    },
    "space_installation_setup": {
        "type": "space_installation_setup",
        "eventId": "5f0c7d2e-8a41-4b6e-9c3d-1e2f3a4b5c6d",
        "installationId": "iNsTaLl0sample000001",
        "status": "active",
    },
    "site_installation_setup": {
        "type": "site_installation_setup",
        "eventId": "5f0c7d2e-8a41-4b6e-9c3d-1e2f3a4b5c6d",
        "installationId": "iNsTaLl0sample000001",
        "status": "active",
    },
    "space_view": {
        "type": "space_view",
        "eventId": "5f0c7d2e-8a41-4b6e-9c3d-1e2f3a4b5c6d",
        "installationId": "iNsTaLl0sample000001",
        "spaceId": "sPaCe0000sample00001",
        "visitor": {
            "anonymousId": "anon-7f3c2a9e",
            "userAgent": "Mozilla/5.0 (X11; Linux x86_64) Chrome/120.0 Safari/537.36",
            "ip": "203.0.113.7",
            "cookies": {},
        },
    },
    "space_content_updated": {
        "type": "space_content_updated",
        "eventId": "5f0c7d2e-8a41-4b6e-9c3d-1e2f3a4b5c6d",
        "installationId": "iNsTaLl0sample000001",
        "spaceId": "sPaCe0000sample00001",
        "revisionId": "rEvIsIoN0sample00001",
    },
    "space_visibility_updated": {
        "type": "space_visibility_updated",
        "eventId": "5f0c7d2e-8a41-4b6e-9c3d-1e2f3a4b5c6d",
        "installationId": "iNsTaLl0sample000001",
        "spaceId": "sPaCe0000sample00001",
        "previousVisibility": "private",
        "visibility": "public",
    },
    "space_gitsync_started": {
        "type": "space_gitsync_started",
        "eventId": "5f0c7d2e-8a41-4b6e-9c3d-1e2f3a4b5c6d",
        "installationId": "iNsTaLl0sample000001",
        "spaceId": "sPaCe0000sample00001",
        "status": "running",
    },
    "space_gitsync_completed": {
        "type": "space_gitsync_completed",
        "eventId": "5f0c7d2e-8a41-4b6e-9c3d-1e2f3a4b5c6d",
        "installationId": "iNsTaLl0sample000001",
        "spaceId": "sPaCe0000sample00001",
        "revisionId": "rEvIsIoN0sample00001",
        "status": "success",
    },
    "site_view": {
        "type": "site_view",
        "eventId": "5f0c7d2e-8a41-4b6e-9c3d-1e2f3a4b5c6d",
        "installationId": "iNsTaLl0sample000001",
        "siteId": "sItE00000sample00001",
        "visitor": {
            "anonymousId": "anon-7f3c2a9e",
            "userAgent": "Mozilla/5.0 (X11; Linux x86_64) Chrome/120.0 Safari/537.36",
            "ip": "203.0.113.7",
            "cookies": {},
        },
        "url": "https://docs.example.com/getting-started",
        "referrer": "https://www.example.com/",
    },
    "page_feedback": {
        "type": "page_feedback",
        "eventId": "5f0c7d2e-8a41-4b6e-9c3d-1e2f3a4b5c6d",
        "installationId": "iNsTaLl0sample000001",
        "siteId": "sItE00000sample00001",
        "spaceId": "sPaCe0000sample00001",
        "pageId": "pAgE00000sample00001",
        "feedback": {
            "rating": "good",
            "comment": "Clear and to the point.",
        },
        "visitor": {
            "anonymousId": "anon-7f3c2a9e",
            "userAgent": "Mozilla/5.0 (X11; Linux x86_64) Chrome/120.0 Safari/537.36",
            "ip": "203.0.113.7",
            "cookies": {},
        },
        "url": "https://docs.example.com/getting-started",
        "referrer": "https://www.example.com/",
    },
}
