"""``manage.py fire_event``: an operator fires any event of the catalogue for a space or a
site, its payload built as the product would and changed by ``--set`` fields."""

from django.core.exceptions import ValidationError
from django.db import transaction

from .. import events
from ..events.schemas import EventPayloadInvalid, payload_check
from ..models import Site, Space
from ..reading.navigation import first_page
from ..sites.addresses import site_page_address

CLI_VISITOR = events.Visitor(
    anonymous_id="operator", user_agent="manage.py fire_event", ip="127.0.0.1", cookies={}
)


@transaction.atomic
def event_fire_by_operator(
    *, event_type: str, space: Space | None = None, site: Site | None = None, overrides=None
):
    """Fire ``event_type`` for a space or site as an operator asks (``manage.py fire_event``).

    The payload starts from what the platform knows (the space's current revision, a visitor
    standing for the operator, ...); ``overrides`` ({"field.sub": value}) replace fields of it.
    """
    if event_type in events.SPACE_EVENTS:
        if space is None:
            raise ValidationError({"space": [f"{event_type} is fired for a space: give --space"]})
        payload = _operator_space_payload(event_type, space)
        organization = space.organization
    elif event_type in events.SITE_EVENTS:
        if site is None:
            raise ValidationError({"site": [f"{event_type} is fired for a site: give --site"]})
        payload = _operator_site_payload(event_type, site)
        organization = site.organization
    else:
        kinds = ", ".join(events.SPACE_EVENTS + events.SITE_EVENTS)
        raise ValidationError({"type": [f"unknown event type; one of {kinds}"]})
    for path, value in (overrides or {}).items():
        _set_field(payload, path, value)
    try:  # always, whatever EVENT_PAYLOAD_CHECKS says: an operator's value is input
        payload_check(event_type, payload)
    except EventPayloadInvalid as exc:
        raise ValidationError(exc.field_errors()) from exc
    return events.fire(event_type, organization=organization, space=space, site=site, **payload)


def _operator_space_payload(event_type: str, space: Space) -> dict:
    revision_id = space.current_revision_id
    defaults = {
        "spaceId": space.id,
        "revisionId": revision_id,
        "visitor": CLI_VISITOR.as_payload(),
        "previousVisibility": space.visibility,
        "visibility": space.visibility,
        "status": "running" if event_type == "space_gitsync_started" else "success",
    }
    return {field: defaults[field] for field in events.EVENT_FIELDS[event_type]}


def _operator_site_payload(event_type: str, site: Site) -> dict:
    space = site.spaces.order_by("created_at", "pk").first()
    page = first_page(space)
    defaults = {
        "siteId": site.id,
        "spaceId": space.id if space else None,
        "pageId": page.id if page else None,
        "feedback": {"rating": "good", "comment": ""},
        "visitor": CLI_VISITOR.as_payload(),
        "url": site_page_address(site, space, page),
        "referrer": "",
    }
    return {field: defaults[field] for field in events.EVENT_FIELDS[event_type]}


def _set_field(payload: dict, path: str, value) -> None:
    *parents, leaf = path.split(".")
    target = payload
    for part in parents:
        target = target.get(part) if isinstance(target, dict) else None
    if not isinstance(target, dict) or leaf not in target:
        fields = ", ".join(_field_paths(payload))
        raise ValidationError({path: [f"not a field of this event; the fields are: {fields}"]})
    target[leaf] = value


def _field_paths(payload: dict, prefix: str = ""):
    for key, value in payload.items():
        if isinstance(value, dict) and value:
            yield from _field_paths(value, f"{prefix}{key}.")
        else:
            yield f"{prefix}{key}"
