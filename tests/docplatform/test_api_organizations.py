"""Organizations through the REST API: a person starts one and is its admin (or only staff,
when the operator says so), its admins change it, everyone else is refused with nothing
written; each change is one row of its audit log."""

import pytest

from docplatform.audit.models import AuditEntry
from docplatform.models import Organization
from tests.api_helpers import API, NOT_FOUND, api_client, error_attrs
from tests.factories import MembershipFactory, OrganizationFactory, UserFactory

pytestmark = pytest.mark.django_db


def audit_rows(action: str) -> list[AuditEntry]:
    return list(AuditEntry.objects.filter(action=action))


@pytest.fixture
def person():
    return UserFactory(username="erin")


def test_a_person_creates_an_organization_and_is_its_admin(person):
    client = api_client(person)
    created = client.post(f"{API}/orgs/", {"title": "Initech", "subdomain": "initech"})
    assert created.status_code == 201
    body = created.json()
    assert body["subdomain"] == "initech"
    assert body["title"] == "Initech"
    assert body["role"] == "admin"
    assert body["membersMayInstall"] is False
    listed = client.get(f"{API}/orgs/").json()["results"]
    assert [(row["subdomain"], row["role"]) for row in listed] == [("initech", "admin")]
    [row] = audit_rows("organization.created")
    assert (row.organization_id, row.actor_user, row.actor_kind) == (body["id"], person, "person")
    assert row.details == {"subdomain": "initech", "title": "Initech"}
    assert AuditEntry.objects.count() == 1


def test_only_staff_create_organizations_when_the_operator_says_so(person, settings):
    settings.ORGANIZATION_CREATION = "staff"
    refused = api_client(person).post(f"{API}/orgs/", {"title": "Initech", "subdomain": "initech"})
    assert refused.status_code == 403
    assert "staff" in refused.json()["errors"][0]["detail"]
    assert not Organization.objects.filter(subdomain="initech").exists()
    assert not AuditEntry.objects.exists()

    staff = UserFactory(is_staff=True)
    created = api_client(staff).post(f"{API}/orgs/", {"title": "Initech", "subdomain": "initech"})
    assert created.status_code == 201


@pytest.mark.parametrize(
    ("body", "attrs"),
    [
        ({"title": "Acme again", "subdomain": "acme"}, ["subdomain"]),  # taken
        ({"title": "Acme again", "subdomain": "ACME"}, ["subdomain"]),  # taken, whatever case
        ({"title": "New", "subdomain": "new"}, ["subdomain"]),  # reserved: /orgs/new/
        ({"title": "Api", "subdomain": "api"}, ["subdomain"]),
        ({"title": "Bad", "subdomain": "-bad-"}, ["subdomain"]),
        ({"title": "Bad", "subdomain": "has space"}, ["subdomain"]),
        ({"title": "Bad", "subdomain": "x" * 64}, ["subdomain"]),
        ({"title": "", "subdomain": "fine"}, ["title"]),
        ({"title": "   ", "subdomain": "fine"}, ["title"]),
        ({"title": "t" * 201, "subdomain": "fine"}, ["title"]),
        ({"subdomain": "fine"}, ["title"]),
        ({"title": "Fine"}, ["subdomain"]),
        ({}, ["subdomain", "title"]),
        ({"title": ["Fine"], "subdomain": {"a": 1}}, ["subdomain", "title"]),
        ([], ["non_field_errors"]),
    ],
)
def test_a_bad_organization_is_refused_naming_the_field(organization, person, body, attrs):
    before = Organization.objects.count()
    response = api_client(person).post(f"{API}/orgs/", body)
    assert response.status_code == 400
    assert error_attrs(response) == attrs
    assert Organization.objects.count() == before
    assert not AuditEntry.objects.exists()


def test_a_body_that_is_not_json_is_a_400(person):
    before = Organization.objects.count()
    response = api_client(person).post(
        f"{API}/orgs/", b'{"title": ', content_type="application/json"
    )
    assert response.status_code == 400
    assert response.json()["errors"][0]["code"] == "parse_error"
    assert Organization.objects.count() == before


def test_nobody_signed_in_creates_no_organization():
    assert api_client().post(f"{API}/orgs/", {"title": "X", "subdomain": "x"}).status_code == 401
    assert not Organization.objects.filter(subdomain="x").exists()


def test_admins_rename_and_let_members_install(organization, org_admin):
    client = api_client(org_admin)
    changed = client.patch(
        f"{API}/orgs/acme/", {"title": "Acme Corp", "membersMayInstall": True}
    ).json()
    assert (changed["title"], changed["membersMayInstall"], changed["role"]) == (
        "Acme Corp",
        True,
        "admin",
    )
    organization.refresh_from_db()
    assert organization.members_may_install is True
    [row] = audit_rows("organization.changed")
    assert row.details == {
        "title": {"from": "Acme", "to": "Acme Corp"},
        "membersMayInstall": {"from": False, "to": True},
    }
    assert row.actor_user == org_admin
    # The same values again change nothing, and record nothing.
    client.patch(f"{API}/orgs/{organization.pk}/", {"title": "Acme Corp"})
    assert len(audit_rows("organization.changed")) == 1


@pytest.mark.parametrize("role", ["member", "reader"])
def test_members_and_readers_read_the_organization_but_change_nothing(organization, role):
    client = api_client(MembershipFactory(organization=organization, role=role).user)
    assert client.get(f"{API}/orgs/acme/").json()["membersMayInstall"] is False
    refused = client.patch(f"{API}/orgs/acme/", {"title": "Mine now", "membersMayInstall": True})
    assert refused.status_code == 403
    assert "admins" in refused.json()["errors"][0]["detail"]
    organization.refresh_from_db()
    assert (organization.title, organization.members_may_install) == ("Acme", False)
    assert not AuditEntry.objects.exists()


def test_another_organizations_people_get_404(organization):
    stranger = MembershipFactory(organization=OrganizationFactory(subdomain="globex"), role="admin")
    client = api_client(stranger.user)
    assert client.get(f"{API}/orgs/acme/").json() == NOT_FOUND
    refused = client.patch(f"{API}/orgs/acme/", {"title": "Taken over"})
    assert refused.status_code == 404
    organization.refresh_from_db()
    assert organization.title == "Acme"
    assert not AuditEntry.objects.exists()


@pytest.mark.parametrize(
    ("body", "attrs"),
    [
        ({"title": ""}, ["title"]),
        ({"title": "t" * 201}, ["title"]),
        ({"membersMayInstall": "perhaps"}, ["membersMayInstall"]),
        ({"title": ["Acme"]}, ["title"]),
    ],
)
def test_bad_changes_are_refused_naming_the_field(organization, org_admin, body, attrs):
    response = api_client(org_admin).patch(f"{API}/orgs/acme/", body)
    assert response.status_code == 400
    assert error_attrs(response) == attrs
    organization.refresh_from_db()
    assert (organization.title, organization.members_may_install) == ("Acme", False)
    assert not AuditEntry.objects.exists()
