"""One error shape everywhere, and no input that reaches a 500."""

import json

import pytest
from django.core.management import call_command

from tests.api_helpers import API, NOT_FOUND, api_client, error_attrs, row_counts

pytestmark = pytest.mark.django_db


@pytest.fixture
def space_spec():
    return {"revision": False}


@pytest.fixture
def member_api(org_member):
    return api_client(org_member)


def test_a_service_validation_error_has_the_serializer_error_shape(member_api, space):
    pages = [{"path": "intro", "title": "Intro"}, {"path": "intro", "title": "Again"}]
    response = member_api.post(f"{API}/spaces/{space.id}/revisions/", {"pages": pages})
    assert response.status_code == 400
    assert response.json() == {
        "type": "validation_error",
        "errors": [
            {"code": "invalid", "detail": "duplicates the path 'intro'", "attr": "pages.1.path"}
        ],
    }


def test_serializer_errors_name_nested_fields_by_dotted_path(member_api, space):
    response = member_api.post(
        f"{API}/spaces/{space.id}/revisions/", {"pages": [{"path": "a"}, {"title": 3}]}
    )
    assert response.status_code == 400
    assert error_attrs(response) == ["pages.0.title", "pages.1.path"]


@pytest.mark.slow
@pytest.mark.parametrize(
    ("body", "content_type"),
    [
        (b'{"pages": [', "application/json"),
        (b"\xff\xfe not utf-8", "application/json"),
        (b'{"message": NaN, "pages": []}', "application/json"),
        (b'{"message": "\\u0000", "pages": []}', "application/json"),
        (b'{"message": "\\ud800", "pages": []}', "application/json"),
        (b"[" * 100_000 + b"]" * 100_000, "application/json"),
        (b"[" * 70 + b"]" * 70, "application/json"),
    ],
    ids=["truncated", "not-utf8", "nan", "nul", "lone-surrogate", "deep-100000", "deep-70"],
)
def test_malformed_json_is_a_parse_error_and_writes_nothing(member_api, space, body, content_type):
    before = row_counts()
    response = member_api.generic(
        "POST", f"{API}/spaces/{space.id}/revisions/", body, content_type=content_type
    )
    assert response.status_code == 400
    assert response.json()["errors"][0]["code"] == "parse_error"
    assert row_counts() == before


@pytest.mark.parametrize("body", [[], [1, 2], "text", 42, None, True])
def test_a_body_that_is_not_an_object_gets_a_field_error(member_api, space, body):
    response = member_api.generic(
        "POST", f"{API}/spaces/{space.id}/revisions/", json.dumps(body), "application/json"
    )
    assert response.status_code == 400
    assert response.json()["type"] == "validation_error"


def test_a_body_over_the_limit_is_refused_with_413(member_api, space, settings):
    settings.DATA_UPLOAD_MAX_MEMORY_SIZE = 1000
    page = member_api.put(f"{API}/spaces/{space.id}/pages/a", {"title": "A", "body": "x" * 2000})
    assert page.status_code == 413
    assert page.json()["errors"][0]["code"] == "payload_too_large"
    settings.REVISION_MAX_BYTES = 1500  # a whole revision's own limit
    body = {"pages": [{"path": "a", "title": "A", "body": "x" * 2000}]}
    response = member_api.post(f"{API}/spaces/{space.id}/revisions/", body)
    assert response.status_code == 413
    assert response.json()["errors"][0]["code"] == "payload_too_large"


def test_other_content_types_are_refused_with_415(member_api, space):
    response = member_api.post(
        f"{API}/spaces/{space.id}/revisions/", {"message": "x"}, format="multipart"
    )
    assert response.status_code == 415
    assert response.json()["type"] == "client_error"


@pytest.mark.parametrize(
    "path",
    [
        "/spaces/doesnotexist/",
        "/spaces/%00/",
        "/spaces/" + "a" * 500 + "/",
        "/deliveries/99999999999999999999999999/",
        "/installations/..%2f/",
        "/no-such-endpoint/",
        "/orgs/nosuchorg/spaces/",
    ],
)
def test_unknown_ids_and_urls_answer_the_json_404(member_api, path):
    response = member_api.get(API + path)
    assert response.status_code == 404
    assert response.json() == NOT_FOUND


@pytest.mark.parametrize(
    ("query", "attrs"),
    [
        ("offset=100000000000000000000000000", ["offset"]),
        ("limit=-5", ["limit"]),
        ("limit=abc&offset=-1", ["limit", "offset"]),
        ("limit=99999999", ["limit"]),
    ],
)
def test_odd_page_windows_are_refused_naming_the_parameter(member_api, space, query, attrs):
    response = member_api.get(f"{API}/orgs/acme/spaces/?{query}")
    assert response.status_code == 400
    assert error_attrs(response) == attrs


def test_a_query_filter_with_a_nul_character_is_a_field_error(member_api):
    response = member_api.get(f"{API}/orgs/acme/events/?type=a%00b")
    assert response.status_code == 400
    assert set(error_attrs(response)) == {"type"}


@pytest.mark.slow
def test_the_openapi_schema_validates_without_warnings(tmp_path):
    call_command(
        "spectacular", "--validate", "--fail-on-warn", "--file", str(tmp_path / "schema.yaml")
    )
    schema = (tmp_path / "schema.yaml").read_text()
    for path in ("/api/v1/installations/{installation_id}/configuration/", "/api/v1/installation/"):
        assert path in schema


@pytest.mark.parametrize("path", ["/api/no-such-thing/", "/api/v2/spaces/", "/api/v1/spaces/x/y/"])
def test_unknown_api_addresses_answer_json_with_debug_on_too(client, settings, path):
    """With DEBUG on (``make run``), Django would answer its HTML debug page for a 404."""
    settings.DEBUG = True
    response = client.get(path)
    assert response.status_code == 404
    assert response["Content-Type"] == "application/json"
    assert response.json() == NOT_FOUND


def test_an_api_address_without_its_slash_is_still_redirected(member_api):
    assert member_api.get(f"{API}/me").status_code == 301
