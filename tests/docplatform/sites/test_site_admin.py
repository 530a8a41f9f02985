"""Sites made, ordered, published and deleted by their organization's admins through the REST
API; an unpublished site is unknown on SITES_URL (its pages, search and beacon). Members and
readers read them and change nothing (403), other organizations' people get 404; each change
is one audit row."""

import pytest

from docplatform.audit.models import AuditEntry
from docplatform.models import Site
from docplatform.sites.models import SiteSpace
from tests.api_helpers import API, NOT_FOUND, api_client, error_attrs
from tests.factories import OrganizationFactory, SiteFactory, SpaceFactory

pytestmark = pytest.mark.django_db


@pytest.fixture
def admin_api(people):
    return api_client(people["admin"])


def rows(action: str) -> list[AuditEntry]:
    return list(AuditEntry.objects.filter(action=action))


def test_admins_create_and_publish_a_site_that_visitors_read(
    admin_api, people, organization, handbook, unlisted, visitor
):
    created = admin_api.post(
        f"{API}/orgs/acme/sites/",
        {"title": "Acme docs", "spaces": [unlisted.id, handbook.id], "published": True},
    )
    assert created.status_code == 201
    body = created.json()
    assert (body["title"], body["spaces"], body["published"]) == (
        "Acme docs",
        [unlisted.id, handbook.id],
        True,
    )
    home = visitor.get(f"/{body['id']}/")
    assert home.status_code == 200
    assert "Handbook" in home.content.decode()
    assert visitor.get(f"/{body['id']}/{unlisted.id}/notes").status_code == 200
    [row] = rows("site.created")
    assert row.details == {
        "title": "Acme docs",
        "spaces": [unlisted.id, handbook.id],
        "published": True,
    }
    assert (row.actor_user, row.organization_id) == (people["admin"], organization.pk)
    assert AuditEntry.objects.count() == 1


def test_a_new_site_is_unpublished_unless_said_and_answers_404_until_then(
    admin_api, handbook, visitor
):
    body = admin_api.post(f"{API}/orgs/acme/sites/", {"title": "Draft", "spaces": [handbook.id]})
    site_id = body.json()["id"]
    assert body.json()["published"] is False
    assert visitor.get(f"/{site_id}/").status_code == 404
    published = admin_api.patch(f"{API}/sites/{site_id}/", {"published": True})
    assert published.json()["published"] is True
    assert visitor.get(f"/{site_id}/").status_code == 200
    assert [row.action for row in AuditEntry.objects.order_by("id")] == [
        "site.created",
        "site.published",
    ]


def test_an_unpublished_site_is_unknown_on_the_sites_origin(
    admin_api, site, handbook, visitor, sites_host
):
    addresses = [
        f"/{site.pk}/",
        f"/{site.pk}/search?q=installer",
        f"/{site.pk}/{handbook.pk}/",
        f"/{site.pk}/{handbook.pk}/guide/install",
    ]
    assert all(visitor.get(address).status_code == 200 for address in addresses)
    assert admin_api.patch(f"{API}/sites/{site.pk}/", {"published": False}).status_code == 200
    for address in addresses:
        response = visitor.get(address)
        assert response.status_code == 404, address
        assert "Acme docs" not in response.content.decode()  # not even its title
    feedback = visitor.post(
        f"/{site.pk}/{handbook.pk}/-/feedback", {"page": "intro", "rating": "good"}
    )
    assert feedback.status_code == 404
    beacon = api_client()
    page = f"http://{sites_host}/{site.pk}/{handbook.pk}/intro"
    views = beacon.post(f"{API}/beacon/sites/{site.pk}/views/", {"url": page})
    assert views.status_code == 404
    [row] = rows("site.unpublished")
    assert row.target_id == site.pk


def test_admins_reorder_a_sites_spaces_and_the_site_follows(
    admin_api, organization, site, handbook, visitor
):
    runbooks = SpaceFactory(organization=organization, title="Runbooks", visibility="public")
    admin_api.patch(f"{API}/sites/{site.pk}/", {"spaces": [handbook.pk, runbooks.pk]})
    home = visitor.get(f"/{site.pk}/").content.decode()
    assert home.index("Handbook") < home.index("Runbooks")

    response = admin_api.patch(f"{API}/sites/{site.pk}/", {"spaces": [runbooks.pk, handbook.pk]})
    assert response.json()["spaces"] == [runbooks.pk, handbook.pk]
    home = visitor.get(f"/{site.pk}/").content.decode()
    assert home.index("Runbooks") < home.index("Handbook")
    assert admin_api.get(f"{API}/orgs/acme/sites/").json()["results"][0]["spaces"] == [
        runbooks.pk,
        handbook.pk,
    ]
    last = rows("site.changed")[0]  # newest first
    assert last.details == {
        "spaces": {"from": [handbook.pk, runbooks.pk], "to": [runbooks.pk, handbook.pk]}
    }
    assert len(rows("site.changed")) == 2


def test_renaming_and_publishing_at_once_are_two_rows(admin_api, organization, handbook):
    site = SiteFactory(organization=organization, title="Docs", published=False)
    response = admin_api.patch(f"{API}/sites/{site.pk}/", {"title": "Acme help", "published": True})
    assert (response.json()["title"], response.json()["published"]) == ("Acme help", True)
    assert sorted(row.action for row in AuditEntry.objects.all()) == [
        "site.changed",
        "site.published",
    ]
    assert rows("site.changed")[0].details == {"title": {"from": "Docs", "to": "Acme help"}}


def test_admins_delete_a_site_and_its_spaces_stay(admin_api, site, handbook, visitor):
    assert admin_api.delete(f"{API}/sites/{site.pk}/").status_code == 204
    assert not Site.objects.filter(pk=site.pk).exists()
    assert not SiteSpace.objects.exists()
    assert handbook.__class__.objects.filter(pk=handbook.pk).exists()
    assert visitor.get(f"/{site.pk}/").status_code == 404
    [row] = rows("site.deleted")
    assert (row.target_id, row.target_label) == (site.pk, "Acme docs")


@pytest.mark.slow
@pytest.mark.parametrize(("role", "status"), [("member", 403), ("reader", 403), ("outsider", 404)])
@pytest.mark.parametrize(
    ("method", "path", "body"),
    [
        ("post", "/orgs/acme/sites/", {"title": "Mine", "spaces": [], "published": True}),
        ("patch", "/sites/{site}/", {"title": "Mine"}),
        ("patch", "/sites/{site}/", {"published": False}),
        ("delete", "/sites/{site}/", None),
    ],
)
def test_only_admins_create_change_publish_or_delete_sites(
    people, site, role, status, method, path, body
):
    client = api_client(people[role])
    response = getattr(client, method)(API + path.format(site=site.pk), body)
    assert response.status_code == status
    if status == 403:
        assert "admins" in response.json()["errors"][0]["detail"]
    else:
        assert response.json() == NOT_FOUND
    site.refresh_from_db()
    assert (site.title, site.published) == ("Acme docs", True)
    assert Site.objects.count() == 1
    assert not AuditEntry.objects.exists()
    if role != "outsider":  # they read it still
        assert client.get(f"{API}/sites/{site.pk}/").status_code == 200


@pytest.mark.parametrize(
    ("body", "attrs"),
    [
        ({}, ["title"]),
        ({"title": ""}, ["title"]),
        ({"title": "Docs", "spaces": "all"}, ["spaces"]),
        ({"title": "Docs", "spaces": [["x"]]}, ["spaces.0"]),
        ({"title": "Docs", "spaces": ["NoSuchSpace"]}, ["spaces"]),
        ({"title": "Docs", "spaces": ["{globex}"]}, ["spaces"]),  # another organization's
        ({"title": "Docs", "spaces": ["{handbook}", "{handbook}"]}, ["spaces"]),
        ({"title": "Docs", "published": "soon"}, ["published"]),
        (["Docs"], ["non_field_errors"]),
    ],
)
def test_a_bad_new_site_is_refused_naming_the_field(admin_api, handbook, body, attrs):
    globex = SpaceFactory(organization=OrganizationFactory(subdomain="globex-docs"))
    if isinstance(body, dict) and isinstance(body.get("spaces"), list):
        body["spaces"] = [
            space.format(globex=globex.pk, handbook=handbook.pk)
            if isinstance(space, str)
            else space
            for space in body["spaces"]
        ]
    response = admin_api.post(f"{API}/orgs/acme/sites/", body)
    assert response.status_code == 400
    assert error_attrs(response) == attrs
    if attrs == ["spaces"] and "globex" in str(body):
        assert globex.pk in response.json()["errors"][0]["detail"]
    assert not Site.objects.exists()
    assert not AuditEntry.objects.exists()


@pytest.mark.parametrize(
    ("body", "attrs"),
    [
        ({}, ["non_field_errors"]),
        ({"title": "  "}, ["title"]),
        ({"spaces": ["NoSuchSpace"]}, ["spaces"]),
        ({"spaces": None}, ["spaces"]),
        ({"published": None}, ["published"]),
    ],
)
def test_a_bad_change_is_refused_naming_the_field(admin_api, site, body, attrs):
    before = list(SiteSpace.objects.values_list("space_id", "position"))
    response = admin_api.patch(f"{API}/sites/{site.pk}/", body)
    assert response.status_code == 400
    assert error_attrs(response) == attrs
    assert list(SiteSpace.objects.values_list("space_id", "position")) == before
    site.refresh_from_db()
    assert (site.title, site.published) == ("Acme docs", True)
    assert not AuditEntry.objects.exists()


def test_a_site_body_that_is_not_json_is_a_400(admin_api, site):
    response = admin_api.patch(f"{API}/sites/{site.pk}/", b"[1, 2", content_type="application/json")
    assert response.status_code == 400
    assert not AuditEntry.objects.exists()
