"""The event catalogue: each event type's JSON Schema, checked on every fired payload
(``EVENT_PAYLOAD_CHECKS``, on in the tests), served at ``/api/v1/event-types/`` and under the
API docs' Schemas."""

import pytest
from django.core.exceptions import ValidationError
from django.db import transaction
from jsonschema import Draft202012Validator

from docplatform import events
from docplatform.events.catalogue import (
    CATALOGUE,
    GIT_SYNC_DIRECTIONS,
    INSTALLATION_STATUSES,
    VISIBILITIES,
)
from docplatform.events.models import Delivery, Event
from docplatform.events.outbox import payload_for
from docplatform.events.schemas import EventPayloadInvalid, body_schema, fields_schema
from docplatform.gitsync.models import GitSync
from docplatform.management.operator_events import event_fire_by_operator
from docplatform.models import Space
from docplatform.services import api_token_create, space_view_record
from integrations.models import Installation
from integrations.services.installations import installation_create
from tests.api_helpers import API, api_client, publish_integration
from tests.factories import SiteFactory

pytestmark = pytest.mark.django_db

EVERY_SCOPE = [
    "space:content:read",
    "space:metadata:read",
    "space:git:sync",
    "site:views:read",
    "page:feedback:read",
]
VISITOR = events.Visitor(anonymous_id="anon-1", user_agent="Mozilla/5.0", ip="::1", cookies={})


def validator(schema: dict) -> Draft202012Validator:
    return Draft202012Validator(schema, format_checker=Draft202012Validator.FORMAT_CHECKER)


@pytest.fixture
def space_spec():
    return {"paths": [None]}


@pytest.fixture
def site(organization, space):
    site = SiteFactory(organization=organization)
    site.spaces.add(space)
    return site


@pytest.fixture
def token(org_admin):
    return api_token_create(user=org_admin, name="reader")[1]


def test_every_event_type_is_listed_with_a_valid_schema_and_an_example_that_matches(token):
    listed = api_client(token=token).get(f"{API}/event-types/")

    assert listed.status_code == 200
    body = listed.json()
    # The platform's ten events and the webhook integration's ping.
    assert [item["type"] for item in body] == list(CATALOGUE) and len(body) == 11
    for item in body:
        Draft202012Validator.check_schema(item["schema"])
        validator(item["schema"]).validate(item["example"])
        assert item["example"]["type"] == item["type"]
        assert item["where"] == CATALOGUE[item["type"]].where
        assert item["scope"] == CATALOGUE[item["type"]].scope
    feedback = next(item for item in body if item["type"] == "page_feedback")
    rating = feedback["schema"]["properties"]["feedback"]["properties"]["rating"]
    assert rating["enum"] == ["good", "ok", "bad"]
    assert feedback["scope"] == "page:feedback:read" and feedback["where"] == "site"


def test_one_event_type_and_a_404_for_an_unknown_one(org_admin, token):
    one = api_client(org_admin).get(f"{API}/event-types/space_gitsync_completed/")
    assert one.status_code == 200
    schema = one.json()["schema"]
    assert schema["required"] == [
        "type",
        "eventId",
        "installationId",
        "spaceId",
        "revisionId",
        "status",
    ]
    assert {"syncId", "direction", "commit", "reason"} <= set(schema["properties"])
    assert schema["additionalProperties"] is False

    unknown = api_client(token=token).get(f"{API}/event-types/space_deleted/")
    assert unknown.status_code == 404
    assert unknown.json()["errors"][0]["detail"].startswith("No event type 'space_deleted'")
    assert api_client().get(f"{API}/event-types/").status_code in (401, 403)


def test_an_installation_token_reads_the_catalogue(tmp_path, org_admin, organization, space):
    integration = publish_integration(tmp_path / "reader", org_admin, name="reader")
    installation = installation_create(
        user=org_admin, integration=integration, organization=organization, space=space
    )
    client = api_client(token=installation.api_token)

    assert client.get(f"{API}/event-types/ping/").json()["example"]["type"] == "ping"


@pytest.mark.slow
def test_the_api_schema_shows_each_event_body_under_schemas(token):
    schema = api_client(token=token).get("/api/schema/?format=json").json()

    components = schema["components"]["schemas"]
    feedback = components["PageFeedbackEvent"]
    assert feedback["properties"]["type"] == {"type": "string", "enum": ["page_feedback"]}
    assert feedback["example"]["type"] == "page_feedback"
    assert "$schema" not in feedback
    revision = components["SpaceGitsyncCompletedEvent"]["properties"]["revisionId"]
    assert (revision["type"], revision["nullable"]) == ("string", True)
    example = components["EventTypeOutput"]["properties"]["example"]
    assert {"$ref": "#/components/schemas/PingEvent"} in example["oneOf"]
    assert schema["paths"][f"{API}/event-types/"]["get"]["tags"] == ["Events"]


def test_every_event_the_platform_fires_matches_its_schema(
    tmp_path, org_admin, organization, space, site
):
    """Each space and site event fired as the platform fires them, delivered to installations
    that receive them all (their set-up events too): every body validates."""
    integration = publish_integration(
        tmp_path / "everything", org_admin, name="everything", scopes=EVERY_SCOPE
    )
    for where in ({"space": space}, {"site": site}):
        installation_create(
            user=org_admin, integration=integration, organization=organization, **where
        )
    for event_type in events.SPACE_EVENTS:
        event_fire_by_operator(event_type=event_type, space=space)
    for event_type in events.SITE_EVENTS:
        event_fire_by_operator(event_type=event_type, site=site)
    space_view_record(space=space, visitor=VISITOR)

    fired = {event.type for event in Event.objects.all()}
    # The three set-up events too: installing in a space or a site installs in the
    # organization first.
    assert fired == {*events.SPACE_EVENTS, *events.SITE_EVENTS, *events.SETUP_EVENTS}
    deliveries = Delivery.objects.select_related("event")
    assert {delivery.event.type for delivery in deliveries} == fired
    for delivery in deliveries:
        body = payload_for(delivery.event, delivery)
        assert not list(validator(body_schema(CATALOGUE[body["type"]])).iter_errors(body)), body


def test_a_payload_off_its_schema_is_refused_by_fire_naming_the_field_and_nothing_is_written(
    site,
):
    feedback = CATALOGUE["page_feedback"].sample(siteId=site.pk)
    feedback["feedback"]["rating"] = "great"
    with pytest.raises(EventPayloadInvalid, match=r"page_feedback .*feedback\.rating: 'great'"):
        events.fire("page_feedback", organization=site.organization, site=site, **feedback)
    with pytest.raises(ValidationError) as extra:  # the operator's values: a field error
        event_fire_by_operator(
            event_type="page_feedback", site=site, overrides={"visitor.cookies": {"a": 1}}
        )
    assert extra.value.message_dict == {"visitor.cookies.a": ["1 is not of type 'string'"]}
    space = site.spaces.get()
    sample = CATALOGUE["site_view"].sample(siteId=site.pk)
    sample["visitor"] = {"anonymousId": "a", "userAgent": "b", "cookies": {}, "os": "linux"}
    with pytest.raises(EventPayloadInvalid) as wrong, transaction.atomic():
        Space.objects.filter(pk=space.pk).update(visibility="unlisted")
        events.fire("site_view", organization=site.organization, site=site, **sample)
    assert wrong.value.problems == ["visitor.ip: is required", "visitor.os: is not a field of it"]
    with pytest.raises(
        TypeError, match=r"site_view: missing fields \['visitor', 'url', 'referrer'\]"
    ):
        events.fire("site_view", organization=site.organization, site=site, siteId=site.pk)

    assert (Event.objects.count(), Delivery.objects.count()) == (0, 0)
    space.refresh_from_db()
    assert space.visibility != "unlisted"  # the caller's transaction was rolled back


def test_without_the_setting_a_payload_is_not_checked(settings, site):
    settings.EVENT_PAYLOAD_CHECKS = False

    feedback = CATALOGUE["page_feedback"].sample(siteId=site.pk)
    feedback["feedback"]["rating"] = "great"
    event = events.fire("page_feedback", organization=site.organization, site=site, **feedback)

    assert event.payload["feedback"]["rating"] == "great"
    with pytest.raises(ValidationError):  # an operator's value is checked whatever the setting
        event_fire_by_operator(
            event_type="page_feedback", site=site, overrides={"feedback.rating": "great"}
        )


def test_the_catalogue_s_choices_are_the_models():
    """The catalogue is imported before the models (and never imports a plug-in app's)."""
    assert tuple(Installation.Status.values) == INSTALLATION_STATUSES
    assert tuple(Space.Visibility.values) == VISIBILITIES
    assert tuple(GitSync.Direction.values) == GIT_SYNC_DIRECTIONS
    completed = CATALOGUE["space_gitsync_completed"].value_schema("status")["enum"]
    assert completed == [str(status) for status in GitSync.FINISHED]
    assert fields_schema(CATALOGUE["ping"]) == {
        "type": "object",
        "properties": {},
        "required": [],
        "additionalProperties": False,
    }
