"""The host's pages for starting an organization, setting it up, creating its spaces and
deleting one, as a person uses them: who sees which button, who is refused (403 naming who
may, 404 for other organizations' people), and nothing written when refused."""

import pytest

from docplatform.audit.models import AuditEntry
from docplatform.models import Organization, Space
from tests.factories import MembershipFactory, OrganizationFactory, UserFactory

pytestmark = pytest.mark.django_db


def signed_in(client, user):
    client.force_login(user)
    return client


def text(response) -> str:
    return response.content.decode()


@pytest.fixture
def reader(organization):
    return MembershipFactory(organization=organization, role="reader").user


@pytest.fixture
def stranger():
    return MembershipFactory(
        organization=OrganizationFactory(subdomain="globex"), role="admin"
    ).user


# --- New organization -----------------------------------------------------------------------


def test_a_person_without_an_organization_is_offered_to_create_one(client):
    person = signed_in(client, UserFactory(username="erin"))
    home = text(person.get("/marketplace/", follow=True))
    assert 'href="/orgs/new/"' in home
    assert 'class="new-organization-link" href="/orgs/new/"' in home

    form = person.get("/orgs/new/")
    assert form.status_code == 200
    assert "New organization" in text(form)
    created = person.post("/orgs/new/", {"title": "Initech", "subdomain": "initech"})
    assert created.status_code == 302
    assert created["Location"] == "/s/"
    spaces = text(person.get("/s/"))
    assert "Initech" in spaces
    assert 'href="/orgs/initech/spaces/new/"' in spaces  # its admin creates its spaces
    organization = Organization.objects.get(subdomain="initech")
    assert AuditEntry.objects.get().action == "organization.created"
    assert person.get(f"/api/v1/orgs/{organization.subdomain}/").json()["role"] == "admin"


@pytest.mark.parametrize(
    ("values", "field"),
    [
        ({"title": "Acme two", "subdomain": "acme"}, "subdomain"),
        ({"title": "New", "subdomain": "new"}, "subdomain"),
        ({"title": "", "subdomain": "empty"}, "title"),
    ],
)
def test_a_refused_organization_is_shown_with_its_error(client, organization, values, field):
    person = signed_in(client, UserFactory())
    before = Organization.objects.count()
    response = person.post("/orgs/new/", values)
    assert response.status_code == 400
    assert f'id="{field}-errors"' in text(response)
    assert Organization.objects.count() == before
    assert not AuditEntry.objects.exists()


@pytest.mark.slow
def test_staff_only_creation_hides_the_page_from_everyone_else(client, settings):
    settings.ORGANIZATION_CREATION = "staff"
    person = signed_in(client, UserFactory())
    assert "/orgs/new/" not in text(person.get("/s/"))
    refused = person.post("/orgs/new/", {"title": "Initech", "subdomain": "initech"})
    assert refused.status_code == 403
    assert "staff" in text(refused)
    assert not Organization.objects.filter(subdomain="initech").exists()


def test_signing_in_comes_first(client):
    response = client.get("/orgs/new/")
    assert response.status_code == 302
    assert response["Location"].startswith("/marketplace/login/")


# --- Organization settings ------------------------------------------------------------------


def test_admins_change_the_organizations_settings(client, organization, org_admin):
    admin = signed_in(client, org_admin)
    page = text(admin.get("/orgs/acme/settings/"))
    assert 'class="organization-settings-link" href="/orgs/acme/settings/"' in page
    saved = admin.post("/orgs/acme/settings/", {"title": "Acme Corp", "members_may_install": "on"})
    assert saved.status_code == 302
    organization.refresh_from_db()
    assert (organization.title, organization.members_may_install) == ("Acme Corp", True)
    assert AuditEntry.objects.get().action == "organization.changed"
    refused = admin.post("/orgs/acme/settings/", {"title": ""})
    assert refused.status_code == 400
    assert 'id="title-errors"' in text(refused)
    organization.refresh_from_db()
    assert organization.title == "Acme Corp"


def test_members_and_readers_cannot_change_the_settings(client, organization, org_member, reader):
    for person in (org_member, reader):
        signed_in(client, person)
        assert "organization-settings-link" not in text(client.get("/s/"))
        assert client.get("/orgs/acme/settings/").status_code == 403
        refused = client.post("/orgs/acme/settings/", {"title": "Mine"})
        assert refused.status_code == 403
        assert "admins" in text(refused)
    organization.refresh_from_db()
    assert organization.title == "Acme"
    assert not AuditEntry.objects.exists()


def test_other_organizations_people_get_404(client, organization, stranger):
    signed_in(client, stranger)
    for address in ("/orgs/acme/settings/", "/orgs/acme/spaces/new/", "/orgs/acme/sites/"):
        assert client.get(address).status_code == 404
        assert client.post(address, {"title": "Mine"}).status_code == 404
    assert not Space.objects.filter(title="Mine").exists()
    assert not AuditEntry.objects.exists()


# --- New space ------------------------------------------------------------------------------


@pytest.mark.parametrize("role", ["admin", "member"])
def test_admins_and_members_create_a_space_from_the_spaces_list(client, organization, role):
    person = signed_in(client, MembershipFactory(organization=organization, role=role).user)
    spaces = text(person.get("/s/"))
    assert 'class="button primary small new-space" href="/orgs/acme/spaces/new/"' in spaces
    created = person.post("/orgs/acme/spaces/new/", {"title": "Runbooks", "visibility": "public"})
    space = Space.objects.get(title="Runbooks")
    assert created["Location"] == f"/s/{space.pk}/new"
    assert (space.organization, space.visibility) == (organization, "public")
    assert AuditEntry.objects.get().action == "space.created"
    refused = person.post("/orgs/acme/spaces/new/", {"title": "  ", "visibility": "public"})
    assert refused.status_code == 400
    assert Space.objects.count() == 1


def test_readers_see_no_new_space_button_and_create_nothing(client, organization, reader):
    person = signed_in(client, reader)
    assert "new-space" not in text(person.get("/s/"))
    assert person.get("/orgs/acme/spaces/new/").status_code == 403
    assert person.post("/orgs/acme/spaces/new/", {"title": "Mine"}).status_code == 403
    assert not Space.objects.exists()
    assert not AuditEntry.objects.exists()


# --- Delete a space -------------------------------------------------------------------------


@pytest.fixture
def space_spec():
    return {"title": "Handbook", "pages": [{"path": "intro", "title": "Intro"}]}


@pytest.mark.slow
def test_admins_delete_a_space_after_typing_its_title(client, space, org_admin):
    admin = signed_in(client, org_admin)
    settings_page = text(admin.get(f"/s/{space.pk}/settings"))
    assert f'href="/s/{space.pk}/settings/delete"' in settings_page
    confirm = text(admin.get(f"/s/{space.pk}/settings/delete"))
    assert "Type <strong>Handbook</strong> to confirm" in confirm

    wrong = admin.post(f"/s/{space.pk}/settings/delete", {"confirm": "handbook"})
    assert wrong.status_code == 400
    assert "type the space&#x27;s title, Handbook, to delete it" in text(wrong)
    assert Space.objects.filter(pk=space.pk).exists()

    deleted = admin.post(f"/s/{space.pk}/settings/delete", {"confirm": "Handbook"})
    assert deleted["Location"] == "/s/"
    assert not Space.objects.filter(pk=space.pk).exists()
    assert AuditEntry.objects.get().action == "space.deleted"
    assert admin.get(f"/s/{space.pk}/").status_code == 404


def test_members_and_readers_delete_no_space(client, space, org_member, reader):
    for person in (org_member, reader):
        signed_in(client, person)
        response = client.post(f"/s/{space.pk}/settings/delete", {"confirm": "Handbook"})
        assert response.status_code == 403
    assert Space.objects.filter(pk=space.pk).exists()
    assert not AuditEntry.objects.exists()


def test_saving_a_spaces_settings_is_one_audit_row(client, space, org_admin):
    admin = signed_in(client, org_admin)
    saved = admin.post(f"/s/{space.pk}/settings", {"title": "Guide", "visibility": "unlisted"})
    assert saved.status_code == 302
    row = AuditEntry.objects.get()
    assert (row.action, row.actor_user) == ("space.changed", org_admin)
    assert row.details == {
        "title": {"from": "Handbook", "to": "Guide"},
        "visibility": {"from": "private", "to": "unlisted"},
    }
