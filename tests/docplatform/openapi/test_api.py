"""The OpenAPI documents API (README, "OpenAPI specifications"): publishing versions from text
or a URL, reading the list, a document and a version, by people and by installation tokens
(``openapi:read``, ``openapi:write``)."""

import time

import pytest

from docplatform.audit.models import AuditEntry
from docplatform.openapi.models import OpenApiDocument, OpenApiVersion
from integrations.services.installations import installation_create
from marketplace.scopes import SCOPE_LABELS
from tests.api_helpers import API, NOT_FOUND, api_client, error_attrs, publish_integration

from .samples import PETSTORE_20, PETSTORE_30, PETSTORE_31, WITHOUT_VERSION

pytestmark = pytest.mark.django_db

OPENAPI = f"{API}/orgs/acme/openapi"


def errors(response) -> dict:
    return {error["attr"]: error["detail"] for error in response.json()["errors"]}


@pytest.fixture
def token_with(org_admin, organization, tmp_path):
    """An installation token of acme whose integration has ``scopes``."""

    def token_with_(scopes):
        folder = tmp_path / f"bot{len(scopes)}"
        integration = publish_integration(
            folder, org_admin, name=f"bot{len(scopes)}", scopes=scopes
        )
        installation = installation_create(
            user=org_admin, integration=integration, organization=organization
        )
        return api_client(token=installation.api_token)

    return token_with_


def test_a_member_publishes_versions_and_everyone_in_the_organization_reads_them(people):
    member = api_client(people["member"])
    first = member.post(f"{OPENAPI}/", {"name": "pets", "content": PETSTORE_30})
    assert first.status_code == 201, first.json()
    assert first.json() | {"createdAt": None} == {
        "name": "pets",
        "number": 1,
        "formatVersion": "3.0.3",
        "size": len(PETSTORE_30.encode()),
        "sourceUrl": "",
        "uploadedBy": people["member"].username,
        "createdAt": None,
    }
    second = member.post(f"{OPENAPI}/", {"name": "pets", "content": PETSTORE_31})
    assert second.json()["number"] == 2 and second.json()["formatVersion"] == "3.1.0"

    reader = api_client(people["reader"])
    listed = reader.get(f"{OPENAPI}/").json()["results"]
    assert [(d["name"], d["latestVersion"], d["versionCount"]) for d in listed] == [("pets", 2, 2)]
    shown = reader.get(f"{OPENAPI}/pets/").json()
    assert [v["number"] for v in shown["versions"]] == [2, 1]
    latest = reader.get(f"{OPENAPI}/pets/versions/latest/").json()
    assert latest["number"] == 2 and latest["content"] == PETSTORE_31
    assert latest["document"]["info"]["title"] == "Pet store"
    assert latest["document"]["paths"]["/pets/{petId}"]["get"]["responses"]["200"]
    first_again = reader.get(f"{OPENAPI}/pets/versions/1/").json()
    assert first_again["content"] == PETSTORE_30  # versions never change
    assert reader.get(f"{OPENAPI}/pets/versions/3/").status_code == 404
    assert reader.get(f"{OPENAPI}/nothing/").status_code == 404

    entries = AuditEntry.objects.filter(action="openapi.published").order_by("at", "id")
    assert [(e.actor_label, e.details["version"]) for e in entries] == [
        (people["member"].username, 1),
        (people["member"].username, 2),
    ]


def test_swagger_2_and_openapi_3_0_in_json_and_3_1_in_yaml_are_accepted(org_admin):
    admin = api_client(org_admin)
    for name, text, version in [
        ("swagger", PETSTORE_20, "2.0"),
        ("three-oh", PETSTORE_30, "3.0.3"),
        ("three-one", PETSTORE_31, "3.1.0"),
    ]:
        answer = admin.post(f"{OPENAPI}/", {"name": name, "content": text})
        assert answer.status_code == 201, answer.json()
        assert answer.json()["formatVersion"] == version


def test_readers_may_not_publish_and_outsiders_see_nothing(people):
    refused = api_client(people["reader"]).post(
        f"{OPENAPI}/", {"name": "pets", "content": PETSTORE_31}
    )
    assert refused.status_code == 403
    assert "admin" in refused.json()["errors"][0]["detail"]
    api_client(people["admin"]).post(f"{OPENAPI}/", {"name": "pets", "content": PETSTORE_31})
    outsider = api_client(people["outsider"])
    assert outsider.get(f"{OPENAPI}/").json() == NOT_FOUND
    assert outsider.get(f"{OPENAPI}/pets/versions/latest/").status_code == 404
    assert outsider.post(f"{OPENAPI}/", {"name": "x", "content": PETSTORE_31}).status_code == 404
    assert api_client().get(f"{OPENAPI}/").status_code in (401, 403)
    assert OpenApiVersion.objects.count() == 1


@pytest.mark.parametrize(
    ("given", "attr", "says"),
    [
        (
            {"name": "pets", "content": WITHOUT_VERSION},
            "content",
            'at info: "version" is a required',
        ),
        (
            {"name": "pets", "content": PETSTORE_31.replace("#/components/schemas/Pet", "#/x")},
            "content",
            "at paths./pets/{petId}.get.responses.200.content.application/json.schema.$ref",
        ),
        (
            {
                "name": "pets",
                "content": PETSTORE_31.replace('"#/components/schemas/Pet"', "other.yaml"),
            },
            "content",
            "only references within the document",
        ),
        ({"name": "pets", "content": "openapi: [3.1"}, "content", "invalid YAML"),
        ({"name": "pets", "content": '{"openapi": "3.1.0",'}, "content", "not valid JSON"),
        ({"name": "pets", "content": "swagger: '1.2'\n"}, "content", "only Swagger 2.0"),
        ({"name": "pets", "content": "openapi: 4.0.0\n"}, "content", "3.0 and 3.1 are read"),
        (
            {"name": "pets", "content": WITHOUT_VERSION.replace('"x"', '"x\\u0000"')},
            "content",
            "at info.title: a text contains a NUL character",
        ),
        ({"name": "Pets!", "content": PETSTORE_31}, "name", "lowercase letters"),
        ({"name": "pets"}, "content", "one"),
        ({"name": "pets", "content": PETSTORE_31, "url": "https://example.com/"}, "content", "one"),
        ({"name": "pets", "content": 7}, "content", "give text"),
    ],
)
def test_an_invalid_document_is_a_400_naming_the_problem_and_nothing_is_stored(
    org_admin, given, attr, says
):
    answer = api_client(org_admin).post(f"{OPENAPI}/", given)
    assert answer.status_code == 400, answer.json()
    assert error_attrs(answer) == [attr]
    assert says in errors(answer)[attr]
    assert not OpenApiDocument.objects.exists() and not OpenApiVersion.objects.exists()
    assert not AuditEntry.objects.filter(action="openapi.published").exists()


def test_a_document_over_the_size_limit_is_refused(org_admin, settings):
    settings.OPENAPI_MAX_BYTES = 200
    answer = api_client(org_admin).post(f"{OPENAPI}/", {"name": "pets", "content": PETSTORE_31})
    assert answer.status_code == 400
    assert "at most 200 are accepted" in errors(answer)["content"]
    assert not OpenApiVersion.objects.exists()


@pytest.mark.slow
def test_a_document_is_fetched_from_a_url_when_its_network_is_allowed(
    org_admin, document_server, settings
):
    base, served = document_server
    served["/spec.yaml"] = (200, PETSTORE_31)
    served["/moved"] = (302, "")
    served["/broken"] = (500, "oops")
    settings.OPENAPI_ALLOWED_NETWORKS = ["127.0.0.0/8"]
    admin = api_client(org_admin)
    answer = admin.post(f"{OPENAPI}/", {"name": "pets", "url": f"{base}/spec.yaml"})
    assert answer.status_code == 201, answer.json()
    assert answer.json()["sourceUrl"] == f"{base}/spec.yaml"
    assert admin.get(f"{OPENAPI}/pets/versions/1/").json()["content"] == PETSTORE_31
    assert AuditEntry.objects.get(action="openapi.published").details["url"] == f"{base}/spec.yaml"

    for path, says in [("/moved", "redirect"), ("/broken", "answered 500")]:
        answer = admin.post(f"{OPENAPI}/", {"name": "pets", "url": f"{base}{path}"})
        assert answer.status_code == 400 and says in errors(answer)["url"]
    settings.OPENAPI_MAX_BYTES = 100
    answer = admin.post(f"{OPENAPI}/", {"name": "pets", "url": f"{base}/spec.yaml"})
    assert "larger than 100 bytes" in errors(answer)["url"]
    served["/silent"] = (0, "")
    settings.OPENAPI_FETCH_TIMEOUT = 0.5
    started = time.monotonic()
    answer = admin.post(f"{OPENAPI}/", {"name": "pets", "url": f"{base}/silent"})
    assert "timeout: no answer within 0.5 s" in errors(answer)["url"]
    assert time.monotonic() - started < 3
    assert OpenApiVersion.objects.count() == 1


@pytest.mark.slow
def test_a_url_to_a_loopback_address_is_refused_unless_its_network_is_allowed(
    org_admin, document_server
):
    base, served = document_server
    served["/spec.yaml"] = (200, PETSTORE_31)
    admin = api_client(org_admin)
    for url, says in [
        (f"{base}/spec.yaml", "resolves to 127.0.0.1, a loopback address"),
        ("http://[::1]:9/spec.yaml", "a loopback address"),
        ("file:///etc/passwd", "only http and https"),
        ("http://user:pw@example.com/", "credentials"),
    ]:
        answer = admin.post(f"{OPENAPI}/", {"name": "pets", "url": url})
        assert answer.status_code == 400, answer.json()
        assert says in errors(answer)["url"]
    assert not OpenApiDocument.objects.exists()


@pytest.mark.slow
def test_an_installation_token_reads_with_openapi_read_and_publishes_with_openapi_write(
    token_with, org_admin
):
    api_client(org_admin).post(f"{OPENAPI}/", {"name": "pets", "content": PETSTORE_31})
    reader = token_with(["openapi:read"])
    assert [d["name"] for d in reader.get(f"{OPENAPI}/").json()["results"]] == ["pets"]
    assert reader.get(f"{OPENAPI}/pets/versions/latest/").json()["number"] == 1
    refused = reader.post(f"{OPENAPI}/", {"name": "pets", "content": PETSTORE_30})
    assert refused.status_code == 403
    assert "openapi:write" in refused.json()["errors"][0]["detail"]

    writer = token_with(["openapi:read", "openapi:write"])
    published = writer.post(f"{OPENAPI}/", {"name": "pets", "content": PETSTORE_30})
    assert published.status_code == 201, published.json()
    assert "(installation " in published.json()["uploadedBy"]
    entry = AuditEntry.objects.filter(action="openapi.published").latest("at")
    assert entry.actor_kind == AuditEntry.ActorKind.INSTALLATION
    # Another organization's documents stay out of its reach.
    assert writer.get(f"{API}/orgs/globex/openapi/").status_code == 404


@pytest.mark.slow
def test_an_installation_token_without_the_scopes_gets_403(token_with, org_admin):
    api_client(org_admin).post(f"{OPENAPI}/", {"name": "pets", "content": PETSTORE_31})
    without = token_with(["space:content:read"])
    for answer in [
        without.get(f"{OPENAPI}/"),
        without.get(f"{OPENAPI}/pets/"),
        without.get(f"{OPENAPI}/pets/versions/latest/"),
    ]:
        assert answer.status_code == 403
        assert "openapi:read" in answer.json()["errors"][0]["detail"]
    answer = without.post(f"{OPENAPI}/", {"name": "pets", "content": PETSTORE_30})
    assert answer.status_code == 403
    assert OpenApiVersion.objects.count() == 1


def test_the_consent_words_say_what_the_scopes_grant():
    assert SCOPE_LABELS["openapi:read"] == "Read your OpenAPI specifications"
    assert SCOPE_LABELS["openapi:write"] == "Publish OpenAPI specifications"
