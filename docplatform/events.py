"""The events the platform fires, and the one mechanism that carries them to installations.

``fire(...)`` writes the event and one delivery per interested installation in the caller's
transaction (a transactional outbox); after commit, Celery tasks take the deliveries to their
consumer: one per delivery, carrying its id, to the integration runtime; one drain task per
burst to the webhook integration, which claims the due deliveries itself. A
periodic sweeper re-queues deliveries that were committed but never queued (broker down) or
whose worker died, so nothing is lost.
"""

from dataclasses import dataclass

#: The scope an installation needs to receive each event (DESIGN.md); None: no scope needed.
EVENT_SCOPES: dict[str, str | None] = {
    "installation_setup": None,
    "space_installation_setup": None,
    "site_installation_setup": None,
    "space_view": "space:metadata:read",
    "space_content_updated": "space:content:read",
    "space_visibility_updated": "space:metadata:read",
    "space_gitsync_started": "space:git:sync",
    "space_gitsync_completed": "space:git:sync",
    "site_view": "site:views:read",
    "page_feedback": "page:feedback:read",
}
SETUP_EVENTS = ("installation_setup", "space_installation_setup", "site_installation_setup")
SPACE_EVENTS = (
    "space_view",
    "space_content_updated",
    "space_visibility_updated",
    "space_gitsync_started",
    "space_gitsync_completed",
)
SITE_EVENTS = ("site_view", "page_feedback")

#: The fields each event's payload carries besides type, eventId and installationId.
EVENT_FIELDS: dict[str, tuple[str, ...]] = {
    "space_view": ("spaceId", "visitor"),
    "space_content_updated": ("spaceId", "revisionId"),
    "space_visibility_updated": ("spaceId", "previousVisibility", "visibility"),
    "space_gitsync_started": ("spaceId", "status"),
    "space_gitsync_completed": ("spaceId", "revisionId", "status"),
    "site_view": ("siteId", "visitor", "url", "referrer"),
    "page_feedback": (
        "siteId",
        "spaceId",
        "pageId",
        "feedback",
        "visitor",
        "url",
        "referrer",
    ),
}
FEEDBACK_RATINGS = ("good", "ok", "bad")


@dataclass(frozen=True)
class Visitor:
    anonymous_id: str
    user_agent: str
    ip: str
    cookies: dict

    def as_payload(self) -> dict:
        return {
            "anonymousId": self.anonymous_id,
            "userAgent": self.user_agent,
            "ip": self.ip,
            "cookies": dict(self.cookies),
        }


def fire(event_type: str, *, organization, payload: dict, space=None, site=None, installation=None):
    """Record an event and its deliveries in the current transaction; queue them after commit.

    ``installation`` addresses a setup event to that one installation; other events go to
    every interested installation (``integrations.selectors.event_recipients``).
    """
    from integrations.services.deliveries import deliveries_create

    from .models import Event

    event = Event.objects.create(
        type=event_type, organization=organization, space=space, site=site, payload=payload
    )
    deliveries_create(event=event, installation=installation)
    return event


def payload_for(event, delivery) -> dict:
    """The JSON body an installation receives for one delivery."""
    return {
        "type": event.type,
        "eventId": str(delivery.event_uuid),
        "installationId": delivery.installation_id,
        **event.payload,
    }
