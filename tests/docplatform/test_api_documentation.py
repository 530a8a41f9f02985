"""The API's documentation (``/api/schema/``, ``/api/docs/``) groups every operation by
resource: each under one of the tags the apps register, each tag described."""

import pytest

pytestmark = pytest.mark.django_db


def operations(schema: dict):
    for path, methods in schema["paths"].items():
        for method, operation in methods.items():
            yield f"{method.upper()} {path}", operation


@pytest.mark.slow
def test_every_operation_sits_under_a_described_resource_tag(client):
    schema = client.get("/api/schema/?format=json").json()
    described = {tag["name"]: tag["description"] for tag in schema["tags"]}
    assert all(described.values())
    untagged = [
        name for name, operation in operations(schema) if operation["tags"][0] not in described
    ]
    assert untagged == []
    tags = {name: operation["tags"] for name, operation in operations(schema)}
    # The most specific pattern wins: a webhook's ping is under Webhooks, not Installations.
    assert tags["POST /api/v1/installations/{installation_id}/webhook/ping/"] == ["Webhooks"]
    assert tags["GET /api/v1/spaces/{space_id}/installations/"] == ["Installations"]
    assert tags["GET /api/v1/spaces/{space_id}/revisions/"] == ["Spaces"]
    assert tags["GET /api/v1/orgs/{org}/events/"] == ["Events"]
    assert list(described)[:2] == ["Organizations", "Spaces"]  # in the order registered


@pytest.mark.slow
def test_the_marketplace_links_the_api_documentation(client, org_member):
    client.force_login(org_member)
    page = client.get("/marketplace/", follow=True).content.decode()
    assert page.count('href="/api/docs/"') == 2  # the top bar and the footer
    assert 'href="/api/schema/"' in page
    assert client.get("/api/docs/").status_code == 200
