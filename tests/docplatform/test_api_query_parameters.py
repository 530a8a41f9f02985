"""Query parameters refuse what is not theirs with a 400 naming the parameter (a page window,
an event type, a filter given empty), and the schema declares those 400s."""

import pytest

from docplatform.api.inputs import MAX_LIMIT, MAX_OFFSET
from docplatform.api.schema import attr_pattern
from tests.api_helpers import API, api_client
from tests.factories import SpaceFactory

pytestmark = pytest.mark.django_db


@pytest.fixture
def member_api(org_member, organization):
    SpaceFactory.create_batch(3, organization=organization)
    return api_client(org_member)


def errors(response) -> list[tuple]:
    assert response.status_code == 400, response.content
    body = response.json()
    assert body["type"] == "validation_error"
    return [(error["attr"], error["code"], error["detail"]) for error in body["errors"]]


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("limit=abc", ("limit", "invalid", "A valid integer is required.")),
        ("limit=2.0", ("limit", "invalid", "A valid integer is required.")),
        ("limit=1e2", ("limit", "invalid", "A valid integer is required.")),
        ("limit=+2", ("limit", "invalid", "A valid integer is required.")),
        ("limit=0", ("limit", "min_value", "Ensure this value is greater than or equal to 1.")),
        (
            f"limit={MAX_LIMIT + 1}",
            ("limit", "max_value", f"Ensure this value is less than or equal to {MAX_LIMIT}."),
        ),
        ("offset=-1", ("offset", "invalid", "A valid integer is required.")),
        (
            f"offset={MAX_OFFSET + 1}",
            ("offset", "max_value", f"Ensure this value is less than or equal to {MAX_OFFSET}."),
        ),
        ("offset=", ("offset", "blank", "give a value, or leave the parameter out")),
    ],
)
def test_a_page_window_that_is_not_one_is_refused(member_api, query, expected):
    assert errors(member_api.get(f"{API}/orgs/acme/spaces/?{query}")) == [expected]


def test_a_page_window_in_range_pages(member_api):
    body = member_api.get(f"{API}/orgs/acme/spaces/?limit=2&offset=1").json()
    assert body["count"] == 3
    assert len(body["results"]) == 2


@pytest.mark.parametrize("value", ["Space View", "space-view", "a\x00b", "x" * 65])
def test_an_event_type_filter_must_look_like_an_event_type(member_api, value):
    response = member_api.get(f"{API}/orgs/acme/events/", {"type": value})
    found = errors(response)
    assert {attr for attr, _, _ in found} == {"type"}
    assert (
        "type",
        "invalid",
        "an event type is lower-case letters and underscores, e.g. space_view",
    ) in found


def test_a_known_event_type_filters(member_api):
    response = member_api.get(f"{API}/orgs/acme/events/", {"type": "space_view"})
    assert response.status_code == 200


@pytest.mark.parametrize(
    "url",
    [
        f"{API}/orgs/acme/events/?type=",
        f"{API}/orgs/acme/installations/?level=",
        f"{API}/integrations/?category=",
    ],
)
def test_a_filter_given_empty_is_refused(member_api, url):
    [(attr, code, _)] = errors(member_api.get(url))
    assert code == "blank"
    assert attr == url.rsplit("?", 1)[1].rstrip("=")


@pytest.mark.slow
def test_the_schema_declares_the_400_of_a_paginated_list(client):
    schema = client.get("/api/schema/?format=json").json()
    operation = schema["paths"]["/api/v1/orgs/{org}/spaces/"]["get"]
    limit = next(p for p in operation["parameters"] if p["name"] == "limit")
    assert limit["schema"] == {"type": "integer", "minimum": 1, "maximum": MAX_LIMIT}
    components = schema["components"]["schemas"]
    declared = components["V1OrgsSpacesListLimitErrorComponent"]["properties"]
    assert declared["attr"]["enum"] == ["limit"]
    assert {"invalid", "min_value", "max_value", "blank"} <= set(declared["code"]["enum"])


@pytest.mark.slow
def test_placeholders_in_a_declared_attr_become_a_pattern(client):
    assert attr_pattern("status") is None
    assert attr_pattern("pages.INDEX.path") == r"^pages\.[0-9]+\.path$"
    assert attr_pattern("configuration.KEY") == r"^configuration\.[\s\S]*$"
    schema = client.get("/api/schema/?format=json").json()
    components = schema["components"]["schemas"]
    attr = components["V1SpacesRevisionsCreatePagesINDEXPathErrorComponent"]["properties"]["attr"]
    assert attr["pattern"] == r"^pages\.[0-9]+\.path$"
    assert "anyOf" in components["V1SpacesRevisionsCreateError"]


@pytest.mark.slow
def test_errors_a_service_raises_are_declared(client):
    schema = client.get("/api/schema/?format=json").json()
    components = schema["components"]["schemas"]
    status = components["V1DeliveriesRedeliverCreateStatusErrorComponent"]["properties"]
    assert status["attr"]["enum"] == ["status"]
    assert status["code"]["enum"] == ["invalid"]
