"""``docplatform-integration openapi publish NAME FILE`` as an author runs it: the console
script in a process of its own against a live server."""

import json

import pytest

from docplatform.openapi.models import OpenApiVersion
from docplatform.reading.blocks import BUILTIN
from docplatform.revisions import space_content_update
from docplatform.services import api_token_create
from tests.factories import MembershipFactory, OrganizationFactory
from tests.integrations.cli_support import Author

from .samples import PETSTORE_31, WITHOUT_VERSION

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def login(tmp_path, live_server):
    def login_(user) -> Author:
        author = Author(tmp_path / f"home-{user.pk}")
        token = api_token_create(user=user, name="laptop")[1]
        done = author.run("login", "--api", live_server.url + "/api/v1", "--token", token)
        assert done.returncode == 0, done.stderr
        return author

    return login_


@pytest.mark.slow
def test_publish_a_yaml_file_as_versions_of_a_document(login, org_member, tmp_path):
    author = login(org_member)
    spec = tmp_path / "petstore.yaml"
    spec.write_text(PETSTORE_31)
    done = author.run("openapi", "publish", "pets", str(spec))
    assert done.returncode == 0, done.stdout + done.stderr
    assert "published pets version 1 (OpenAPI 3.1.0" in done.stdout
    assert "in acme" in done.stdout

    again = author.run("openapi", "publish", "pets", str(spec), "--organization", "acme", "--json")
    assert again.returncode == 0, again.stderr
    assert json.loads(again.stdout)["number"] == 2
    assert OpenApiVersion.objects.filter(document__name="pets").count() == 2
    assert OpenApiVersion.objects.get(number=1).content == PETSTORE_31


@pytest.mark.slow
def test_an_invalid_document_is_refused_naming_where(login, org_member, tmp_path):
    author = login(org_member)
    spec = tmp_path / "broken.json"
    spec.write_text(WITHOUT_VERSION)
    done = author.run("openapi", "publish", "pets", str(spec))
    assert done.returncode == 1
    assert 'content: Not a valid OpenAPI document: at info: "version" is a required' in done.stdout
    assert "openapi publish was refused (400)" in done.stderr
    assert not OpenApiVersion.objects.exists()

    missing = author.run("openapi", "publish", "pets", str(tmp_path / "nope.yaml"))
    assert missing.returncode == 2 and "no such file" in missing.stderr


@pytest.mark.slow
def test_a_reader_is_refused_and_several_organizations_need_one_named(
    login, org_reader, org_member, tmp_path
):
    spec = tmp_path / "petstore.yaml"
    spec.write_text(PETSTORE_31)
    refused = login(org_reader).run("openapi", "publish", "pets", str(spec))
    assert refused.returncode == 1
    assert "openapi publish was refused (403)" in refused.stderr

    MembershipFactory(user=org_member, organization=OrganizationFactory(subdomain="globex"))
    author = login(org_member)
    ambiguous = author.run("openapi", "publish", "pets", str(spec))
    assert ambiguous.returncode == 2
    assert "give --organization" in ambiguous.stderr and "globex" in ambiguous.stderr
    chosen = author.run("openapi", "publish", "pets", str(spec), "--organization", "globex")
    assert chosen.returncode == 0, chosen.stderr
    assert OpenApiVersion.objects.get().document.organization.subdomain == "globex"


@pytest.mark.slow
def test_a_document_published_by_the_cli_renders_as_a_block_in_the_reader_and_on_the_site(
    login, org_member, tmp_path, handbook, site, visitor, client
):
    spec = tmp_path / "petstore.yaml"
    spec.write_text(PETSTORE_31)
    done = login(org_member).run("openapi", "publish", "pets", str(spec))
    assert done.returncode == 0, done.stdout + done.stderr
    block = {
        "integration": BUILTIN,
        "block": "openapi-operation",
        "key": "getpet",
        "props": {"document": "pets", "operation": "GET /pets/{petId}"},
    }
    body = f"Our API.\n\n```block\n{json.dumps(block)}\n```\n"
    space_content_update(
        space=handbook, pages=[{"path": "api", "title": "API", "body": body}], message="API"
    )
    client.force_login(org_member)
    for page in [
        client.get(f"/s/{handbook.pk}/api").content.decode(),
        visitor.get(f"/{site.pk}/{handbook.pk}/api").content.decode(),
    ]:
        assert '<span class="openapi-method openapi-method-get">GET</span>' in page
        assert '<code class="openapi-path">/pets/{petId}</code>' in page
        assert "Fetch one pet" in page and "<script>alert" not in page
