"""Organizations, spaces, their content and sites through the REST API (members only)."""

import pytest

from docplatform import services
from docplatform.events.models import Event
from docplatform.models import Revision, Space
from tests.api_helpers import API, NOT_FOUND, api_client, error_attrs, row_counts
from tests.factories import (
    MembershipFactory,
    OrganizationFactory,
    PageFactory,
    RevisionFactory,
    SiteFactory,
    SpaceFactory,
)

pytestmark = pytest.mark.django_db


@pytest.fixture
def space_spec():
    return {"title": "Handbook", "revision": False}


@pytest.fixture
def site(organization, space):
    site = SiteFactory(organization=organization, title="Docs")
    site.spaces.add(space)
    return site


@pytest.fixture
def member_api(org_member):
    return api_client(org_member)


@pytest.fixture
def outsider_api():
    return api_client(MembershipFactory(organization=OrganizationFactory(subdomain="globex")).user)


def test_organizations_list_the_callers_own_with_their_role(organization, org_admin, org_member):
    beta = OrganizationFactory(subdomain="beta")
    MembershipFactory(user=org_admin, organization=beta)
    MembershipFactory(organization=beta, role="admin")
    OrganizationFactory(subdomain="hidden")
    body = api_client(org_admin).get(f"{API}/orgs/").json()
    assert body["count"] == 2
    assert [(org["subdomain"], org["role"]) for org in body["results"]] == [
        ("acme", "admin"),
        ("beta", "member"),
    ]


def test_an_organization_is_addressed_by_id_or_subdomain(member_api, organization):
    by_subdomain = member_api.get(f"{API}/orgs/acme/").json()
    assert by_subdomain == member_api.get(f"{API}/orgs/{organization.id}/").json()
    assert by_subdomain["role"] == "member"


@pytest.mark.parametrize(
    "path",
    [
        "/orgs/acme/",
        "/orgs/acme/spaces/",
        "/orgs/acme/sites/",
        "/orgs/acme/events/",
        "/spaces/{space}/",
        "/spaces/{space}/revisions/",
        "/spaces/{space}/pages/",
        "/sites/{site}/",
    ],
)
def test_non_members_get_a_404_that_names_nothing(outsider_api, space, site, path):
    response = outsider_api.get(API + path.format(space=space.id, site=site.id))
    assert response.status_code == 404
    assert response.json() == NOT_FOUND


@pytest.mark.parametrize(
    ("method", "path", "body"),
    [
        ("patch", "/spaces/{space}/", {"visibility": "public"}),
        ("post", "/spaces/{space}/revisions/", {"pages": [{"path": "a", "title": "A"}]}),
        ("post", "/spaces/{space}/views/", None),
    ],
)
def test_non_members_cannot_act_on_a_space(outsider_api, space, method, path, body):
    before = row_counts()
    response = getattr(outsider_api, method)(API + path.format(space=space.id), body)
    assert response.status_code == 404
    assert row_counts() == before
    assert Space.objects.get().visibility == "private"


def test_anonymous_callers_get_401(space):
    response = api_client().get(f"{API}/spaces/{space.id}/")
    assert response.status_code == 401


def test_spaces_of_an_organization(member_api, space):
    SpaceFactory(title="Elsewhere")
    body = member_api.get(f"{API}/orgs/acme/spaces/").json()
    assert [row["id"] for row in body["results"]] == [space.id]
    assert body["results"][0] == {
        "id": space.id,
        "organization": space.organization_id,
        "title": "Handbook",
        "visibility": "private",
        "currentRevision": None,
        "readersMayComment": False,
        "mergeRules": {"requiredApprovals": 0, "upToDate": False},
        "changeRequestsOnly": False,
        "createdAt": body["results"][0]["createdAt"],
    }


def test_changing_visibility_fires_its_event(org_admin, space):
    response = api_client(org_admin).patch(f"{API}/spaces/{space.id}/", {"visibility": "public"})
    assert response.status_code == 200
    assert response.json()["visibility"] == "public"
    event = Event.objects.get(type="space_visibility_updated")
    assert event.payload == {
        "spaceId": space.id,
        "previousVisibility": "private",
        "visibility": "public",
    }


def test_a_new_revision_becomes_the_current_content(member_api, org_member, space):
    pages = [
        {"path": "intro", "title": "Intro", "body": "# Hi\n"},
        {"path": "setup", "title": "Setup"},
    ]
    response = member_api.post(
        f"{API}/spaces/{space.id}/revisions/", {"message": "First", "pages": pages}
    )
    assert response.status_code == 201
    revision = response.json()
    assert revision["author"] == org_member.username
    assert revision["message"] == "First"

    current = member_api.get(f"{API}/spaces/{space.id}/pages/").json()["results"]
    assert [(page["path"], page["body"]) for page in current] == [
        ("intro", "# Hi\n"),
        ("setup", ""),
    ]
    by_revision = member_api.get(f"{API}/revisions/{revision['id']}/pages/").json()
    assert by_revision["results"] == current
    listed = member_api.get(f"{API}/spaces/{space.id}/revisions/").json()["results"]
    assert [row["id"] for row in listed] == [revision["id"]]
    event = Event.objects.get(type="space_content_updated")
    assert event.payload == {"spaceId": space.id, "revisionId": revision["id"]}


def test_pages_of_another_organizations_revision_are_not_found(member_api):
    revision = RevisionFactory()
    PageFactory(revision=revision)
    response = member_api.get(f"{API}/revisions/{revision.pk}/pages/")
    assert response.status_code == 404


def test_a_space_view_takes_the_visitor_from_the_request(member_api, space):
    member_api.cookies["site_pref"] = "dark"
    response = member_api.post(
        f"{API}/spaces/{space.id}/views/",
        HTTP_USER_AGENT="Reader/1.0",
        REMOTE_ADDR="203.0.113.7",
    )
    assert response.status_code == 204
    visitor = Event.objects.get(type="space_view").payload["visitor"]
    assert visitor["userAgent"] == "Reader/1.0"
    assert visitor["ip"] == "203.0.113.7"
    assert visitor["cookies"] == {"site_pref": "dark"}
    assert visitor["anonymousId"] == response.cookies["dp_visitor"].value


def test_sites_list_their_spaces(member_api, site, space):
    body = member_api.get(f"{API}/orgs/acme/sites/").json()
    assert [(row["id"], row["spaces"]) for row in body["results"]] == [(site.id, [space.id])]
    assert member_api.get(f"{API}/sites/{site.id}/").json()["spaces"] == [space.id]


def test_events_of_an_organization_filtered_by_type(member_api, space):
    member_api.post(f"{API}/spaces/{space.id}/views/")
    services.space_visibility_set(space=space, visibility="public")
    other = SpaceFactory()
    member_api.post(f"{API}/spaces/{other.id}/views/")  # not a member: 404

    everything = member_api.get(f"{API}/orgs/acme/events/").json()
    assert sorted(row["type"] for row in everything["results"]) == [
        "space_view",
        "space_visibility_updated",
    ]
    filtered = member_api.get(f"{API}/orgs/acme/events/?type=space_view").json()
    assert [row["type"] for row in filtered["results"]] == ["space_view"]


@pytest.mark.parametrize(
    ("method", "path", "body", "attrs"),
    [
        ("patch", "/spaces/{space}/", {"visibility": "secret"}, ["visibility"]),
        ("patch", "/spaces/{space}/", {}, ["non_field_errors"]),  # nothing to change
        ("post", "/spaces/{space}/revisions/", {}, ["pages"]),
        ("post", "/spaces/{space}/revisions/", {"pages": []}, ["pages"]),
        ("post", "/spaces/{space}/revisions/", {"pages": "intro"}, ["pages"]),
        (
            "post",
            "/spaces/{space}/revisions/",
            {"pages": [{"path": " ", "title": "T"}]},
            ["pages.0.path"],
        ),
        (
            "post",
            "/spaces/{space}/revisions/",
            {"pages": [{"path": "p" * 301, "title": "T", "body": ["x"]}]},
            ["pages.0.body", "pages.0.path"],
        ),
        (
            "post",
            "/spaces/{space}/revisions/",
            {"message": "m" * 501, "pages": [{"path": "a", "title": "A"}]},
            ["message"],
        ),
        (
            "post",
            "/spaces/{space}/revisions/",
            {"pages": [{"path": "a", "title": "A"}, {"path": "a", "title": "B"}]},
            ["pages.1.path"],
        ),
    ],
)
def test_bad_bodies_get_field_errors_and_write_nothing(org_admin, space, method, path, body, attrs):
    before = row_counts()
    admin_api = api_client(org_admin)  # the organization's admins may make every change
    response = getattr(admin_api, method)(API + path.format(space=space.id), body)
    assert response.status_code == 400
    assert error_attrs(response) == attrs
    assert row_counts() == before
    assert Revision.objects.count() == 0
    assert Space.objects.get().visibility == "private"


def test_only_admins_change_visibility_and_readers_write_no_revision(
    member_api, space, organization
):
    refused = member_api.patch(f"{API}/spaces/{space.id}/", {"visibility": "public"})
    assert refused.status_code == 403
    assert "admins" in refused.json()["errors"][0]["detail"]
    reader = api_client(MembershipFactory(organization=organization, role="reader").user)
    assert reader.get(f"{API}/spaces/{space.id}/revisions/").status_code == 200
    written = reader.post(
        f"{API}/spaces/{space.id}/revisions/", {"pages": [{"path": "a", "title": "A"}]}
    )
    assert written.status_code == 403
    assert "admins and members" in written.json()["errors"][0]["detail"]
    assert not Event.objects.exists()


def test_a_revision_based_on_an_older_one_whose_changes_overlap_is_refused_with_409(
    member_api, space
):
    first = member_api.post(
        f"{API}/spaces/{space.id}/revisions/", {"pages": [{"path": "a", "title": "A"}]}
    ).json()["id"]
    member_api.post(
        f"{API}/spaces/{space.id}/revisions/",
        {"pages": [{"path": "a", "title": "B"}], "baseRevision": first},
    )
    stale = member_api.post(
        f"{API}/spaces/{space.id}/revisions/",
        {"pages": [{"path": "a", "title": "C"}], "baseRevision": first},
    )
    assert stale.status_code == 409
    assert stale.json()["conflicts"] == [
        {"page": "a", "hunks": [{"field": "title", "base": "A", "theirs": "B", "mine": "C"}]}
    ]
    assert stale.json()["errors"][0]["attr"] == "baseRevision"
    assert space.revisions.count() == 2


def test_a_revision_based_on_an_older_one_is_merged_when_the_changes_do_not_overlap(
    member_api, space
):
    body = "# Guide\n\nInstall it.\n\nRun it.\n\nStop it.\n"
    pages = [{"path": "guide", "title": "Guide", "body": body}, {"path": "faq", "title": "FAQ"}]
    url = f"{API}/spaces/{space.id}/revisions/"
    first = member_api.post(url, {"pages": pages}).json()["id"]
    theirs = [{**pages[0], "body": body.replace("Install it.", "Install it with pip.")}, pages[1]]
    assert member_api.post(url, {"pages": theirs, "baseRevision": first}).status_code == 201
    mine = [
        {**pages[0], "body": body.replace("Stop it.", "Stop it with Ctrl-C.")},
        {"path": "faq", "title": "Questions"},
        {"path": "added", "title": "Added"},
    ]
    merged = member_api.post(url, {"pages": mine, "baseRevision": first})
    assert merged.status_code == 201, merged.json()
    now = {
        page["path"]: page
        for page in member_api.get(f"{API}/spaces/{space.id}/pages/").json()["results"]
    }
    assert now["guide"]["body"] == (
        "# Guide\n\nInstall it with pip.\n\nRun it.\n\nStop it with Ctrl-C.\n"
    )
    assert now["faq"]["title"] == "Questions" and "added" in now


def test_a_base_revision_of_another_space_is_a_400_naming_it(member_api, space, organization):
    from tests.factories import SpaceFactory

    other = SpaceFactory(organization=organization)
    other_revision = member_api.post(
        f"{API}/spaces/{other.id}/revisions/", {"pages": [{"path": "a", "title": "A"}]}
    ).json()["id"]
    refused = member_api.post(
        f"{API}/spaces/{space.id}/revisions/",
        {"pages": [{"path": "a", "title": "A"}], "baseRevision": other_revision},
    )
    assert refused.status_code == 400
    assert refused.json()["errors"][0]["attr"] == "baseRevision"
