"""The built-in OpenAPI operation block: one operation of one of the organization's documents,
following its latest version, in the reader and on the site, escaped; missing documents and
operations are inline notices; the editor's quick insert menu offers each operation."""

import html
import json
import re

import pytest

from docplatform.openapi.models import OpenApiVersion
from docplatform.openapi.services import openapi_publish
from docplatform.reading.blocks import BUILTIN
from docplatform.revisions import space_content_update

from .samples import PETSTORE_20, PETSTORE_30, PETSTORE_31

pytestmark = pytest.mark.django_db


def fence(key: str, **props) -> str:
    body = {"integration": BUILTIN, "block": "openapi-operation", "key": key, "props": props}
    return f"```block\n{json.dumps(body)}\n```\n"


def text_of(page: str) -> str:
    """The page's text as a reader sees it."""
    return html.unescape(re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", page)))


@pytest.fixture
def pets(organization, org_admin):
    return openapi_publish(
        organization=organization, name="pets", content=PETSTORE_31, actor=org_admin
    )


def page_with(space, *blocks: str) -> None:
    body = "Our API.\n\n" + "\n".join(blocks)
    space_content_update(
        space=space, pages=[{"path": "intro", "title": "Intro", "body": body}], message="API"
    )


def test_the_block_shows_the_operation_in_the_reader_and_on_the_site(
    client, org_reader, pets, handbook, site, visitor
):
    page_with(handbook, fence("get1", document="pets", operation="GET /pets/{petId}"))
    client.force_login(org_reader)
    for page in [
        client.get(f"/s/{handbook.pk}/intro").content.decode(),
        visitor.get(f"/{site.pk}/{handbook.pk}/intro").content.decode(),
    ]:
        shown = text_of(page)
        assert "GET /pets/{petId}" in shown
        assert "Fetch one pet" in shown
        assert (
            "petId required path integer (int64) The pet's id" in shown
        )  # the path item's parameter, by $ref
        assert "fields query string Which fields to return" in shown
        assert "200 The pet" in shown and "404 No such pet" in shown
        assert "parent Pet (recursive)" in shown  # the schema contains itself: named, once
        assert "&quot;name&quot;: &quot;Rex&quot;" in page  # the example, escaped JSON
        # The document's text is escaped: no script or handler of it reaches the page.
        assert "<script>alert" not in page and "<img src=x" not in page
        assert "&lt;img src=x onerror=alert(1)&gt;" in page


def test_the_block_follows_the_latest_version_and_operation_ids(
    client, org_admin, organization, pets, handbook
):
    page_with(
        handbook,
        fence("byid", document="pets", operationId="createPet"),
        fence("list", document="pets", operation="GET /pets"),
    )
    client.force_login(org_admin)
    shown = text_of(client.get(f"/s/{handbook.pk}/intro").content.decode())
    assert "POST /pets" in shown and "Request body required" in shown
    assert "The OpenAPI document 'pets' has no operation GET /pets." in shown

    openapi_publish(organization=organization, name="pets", content=PETSTORE_30, actor=org_admin)
    shown = text_of(client.get(f"/s/{handbook.pk}/intro").content.decode())
    assert "GET /pets" in shown and "List pets" in shown  # version 2 has it
    assert "has no operation operationId createPet" in shown
    assert OpenApiVersion.objects.count() == 2


def test_swagger_2_operations_show_their_body_parameters_and_response_schemas(
    client, org_admin, organization, handbook
):
    openapi_publish(organization=organization, name="old", content=PETSTORE_20, actor=org_admin)
    page_with(handbook, fence("old", document="old", operation="GET /pets"))
    client.force_login(org_admin)
    shown = text_of(client.get(f"/s/{handbook.pk}/intro").content.decode())
    assert "limit query integer" in shown
    assert "200 Pets application/json" in shown and "name string" in shown


def test_a_missing_document_or_operation_is_a_notice_not_an_error(
    client, org_admin, pets, handbook
):
    page_with(
        handbook,
        fence("nodoc", document="nothing", operation="GET /pets"),
        fence("noop", document="pets", operation="DELETE /pets/{petId}"),
        fence("noprops", document="pets"),
    )
    client.force_login(org_admin)
    answer = client.get(f"/s/{handbook.pk}/intro")
    assert answer.status_code == 200
    shown = text_of(answer.content.decode())
    assert "The organization has no OpenAPI document named 'nothing'." in shown
    assert "has no operation DELETE /pets/{petId}" in shown
    assert 'Name an operation in the block\'s props: "operation"' in shown


def test_another_organizations_document_is_not_shown(client, org_admin, handbook):
    from tests.factories import OrganizationFactory

    globex = OrganizationFactory(subdomain="globex")
    openapi_publish(organization=globex, name="pets", content=PETSTORE_31, actor=org_admin)
    page_with(handbook, fence("theirs", document="pets", operation="GET /pets/{petId}"))
    client.force_login(org_admin)
    shown = text_of(client.get(f"/s/{handbook.pk}/intro").content.decode())
    assert "no OpenAPI document named 'pets'" in shown and "Fetch one pet" not in shown


def test_the_quick_insert_menu_offers_each_operation_with_its_props(
    client, org_member, pets, handbook
):
    client.force_login(org_member)
    editor = client.get(f"/s/{handbook.pk}/new").content.decode()
    found = re.search(
        r'<script id="quick-insert-blocks" type="application/json">(.*?)</script>', editor, re.S
    )
    choices = json.loads(found.group(1))
    ours = [c for c in choices if c["integration"] == BUILTIN]
    assert {(c["title"], json.dumps(c["props"], sort_keys=True)) for c in ours} == {
        ("GET /pets/{petId}", '{"document": "pets", "operation": "GET /pets/{petId}"}'),
        ("POST /pets", '{"document": "pets", "operation": "POST /pets"}'),
    }
    assert all(c["block"] == "openapi-operation" for c in ours)
