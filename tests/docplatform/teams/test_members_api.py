"""Members and roles through the REST API: any member reads who is in, admins change roles
and remove people, the last admin stays, and a removed person reaches nothing any more."""

import pytest
from django.core.exceptions import PermissionDenied

from docplatform import access
from docplatform.audit.models import AuditEntry
from docplatform.services import api_token_create
from docplatform.teams.services import (
    invitation_create,
    membership_remove,
    membership_role_change,
)
from integrations.services.installations import installation_create
from tests.api_helpers import API, NOT_FOUND, api_client, error_attrs
from tests.factories import IntegrationFactory, MembershipFactory, SpaceFactory

from .conftest import audit_actions, invitations_url, members_url, written

pytestmark = pytest.mark.django_db


def test_every_member_reads_who_is_in_and_their_roles(org_admin, org_member, org_reader):
    answer = api_client(org_reader).get(members_url())
    assert answer.status_code == 200
    rows = answer.json()["results"]
    assert [(row["username"], row["role"]) for row in rows] == [
        (org_admin.username, "admin"),
        (org_member.username, "member"),
        (org_reader.username, "reader"),
    ]
    assert rows[0]["email"] == org_admin.email and rows[0]["joinedAt"]


def test_an_admin_changes_a_role_once_recorded(org_admin, org_member, organization):
    changed = api_client(org_admin).patch(
        members_url(username=org_member.username), {"role": "reader"}
    )
    assert changed.status_code == 200
    assert changed.json()["role"] == "reader"
    assert access.membership_of(organization, org_member.username).role == "reader"
    row = AuditEntry.objects.get()
    assert row.action == "member.role_changed"
    assert row.details == {"from": "member", "to": "reader"}
    assert row.actor_label == org_admin.username and row.target_label == org_member.username
    assert row.organization_id == organization.pk

    same = api_client(org_admin).patch(
        members_url(username=org_member.username), {"role": "reader"}
    )
    assert same.status_code == 200 and AuditEntry.objects.count() == 1  # nothing changed


def test_the_last_admin_can_be_neither_demoted_nor_removed(org_admin, organization):
    client = api_client(org_admin)
    demoted = client.patch(members_url(username=org_admin.username), {"role": "member"})
    assert demoted.status_code == 400 and error_attrs(demoted) == ["role"]
    assert "last admin" in demoted.json()["errors"][0]["detail"]
    removed = client.delete(members_url(username=org_admin.username))
    assert removed.status_code == 400 and error_attrs(removed) == ["username"]
    assert "last admin" in removed.json()["errors"][0]["detail"]
    assert access.admin_count(organization) == 1 and audit_actions() == []

    second = MembershipFactory(organization=organization, role="admin").user
    assert (
        client.patch(members_url(username=second.username), {"role": "reader"}).status_code == 200
    )
    assert client.delete(members_url(username=org_admin.username)).status_code == 400
    promoted = api_client(second).patch(members_url(username=second.username), {"role": "admin"})
    assert promoted.status_code == 403  # a reader now


def test_an_admin_removes_a_member_once_recorded(org_admin, org_member, organization):
    assert (
        api_client(org_admin).delete(members_url(username=org_member.username)).status_code == 204
    )
    assert access.membership_of(organization, org_member.username) is None
    row = AuditEntry.objects.get()
    assert (row.action, row.target_label, row.details) == (
        "member.removed",
        org_member.username,
        {"role": "member"},
    )
    again = api_client(org_admin).delete(members_url(username=org_member.username))
    assert again.json() == NOT_FOUND


def test_an_admin_may_leave_when_another_admin_stays(org_admin, organization):
    MembershipFactory(organization=organization, role="admin")
    client = api_client(org_admin)
    assert client.delete(members_url(username=org_admin.username)).status_code == 204
    assert client.get(members_url()).status_code == 404  # no longer theirs


def test_a_removed_member_reaches_nothing_of_the_organization(
    org_admin, org_member, organization, client
):
    space = SpaceFactory(organization=organization)
    _, raw = api_token_create(user=org_member, name="laptop")
    by_token = api_client(token=raw)
    client.force_login(org_member)  # a browser session
    assert by_token.get(f"{API}/orgs/acme/").status_code == 200
    assert by_token.get(f"{API}/spaces/{space.pk}/").status_code == 200
    assert client.get("/orgs/acme/members/").status_code == 200

    api_client(org_admin).delete(members_url(username=org_member.username))

    assert by_token.get(f"{API}/orgs/acme/").json() == NOT_FOUND
    assert by_token.get(f"{API}/orgs/acme/spaces/").status_code == 404
    assert by_token.get(f"{API}/spaces/{space.pk}/").status_code == 404
    assert by_token.get(members_url()).status_code == 404
    assert client.get("/orgs/acme/members/").status_code == 404
    assert by_token.get(f"{API}/me/").json()["organizations"] == []


def test_bad_roles_are_refused_naming_the_field(org_admin, org_member):
    client = api_client(org_admin)
    for sent in ({"role": "owner"}, {}, {"role": None}):
        refused = client.patch(members_url(username=org_member.username), sent)
        assert refused.status_code == 400 and error_attrs(refused) == ["role"], sent
    assert audit_actions() == []


def test_an_unknown_member_is_not_found(org_admin):
    client = api_client(org_admin)
    assert client.patch(members_url(username="nobody"), {"role": "reader"}).json() == NOT_FOUND
    assert client.delete(members_url(username="nobody")).json() == NOT_FOUND


# --- Who may ------------------------------------------------------------------------------------


ADMIN_OPERATIONS = {
    "list invitations": lambda client, ids: client.get(invitations_url()),
    "invite": lambda client, ids: client.post(
        invitations_url(), {"email": "eve@example.com", "role": "admin"}
    ),
    "revoke": lambda client, ids: client.delete(f"{invitations_url()}{ids['invitation']}/"),
    "change a role": lambda client, ids: client.patch(
        members_url(username=ids["admin"]), {"role": "reader"}
    ),
    "remove": lambda client, ids: client.delete(members_url(username=ids["admin"])),
}
REFUSAL = "Only the organization's admins may invite people and manage its members."


@pytest.fixture
def admin_operation_ids(org_admin, organization):
    made = invitation_create(
        organization=organization, email="erin@example.com", role="member", invited_by=org_admin
    )
    return {"invitation": made.invitation.pk, "admin": org_admin.username}


@pytest.mark.parametrize("operation", ADMIN_OPERATIONS)
@pytest.mark.parametrize("role", ["member", "reader"])
def test_members_and_readers_are_refused_every_admin_operation(
    operation, role, organization, admin_operation_ids
):
    person = MembershipFactory(organization=organization, role=role).user
    before = written()
    refused = ADMIN_OPERATIONS[operation](api_client(person), admin_operation_ids)
    assert refused.status_code == 403
    assert refused.json()["errors"][0]["detail"] == REFUSAL
    assert written() == before


@pytest.mark.slow
@pytest.mark.parametrize("operation", ADMIN_OPERATIONS)
def test_another_organizations_people_find_nothing(operation, outsider, admin_operation_ids):
    MembershipFactory(user=outsider, role="admin")  # an admin elsewhere
    before = written()
    refused = ADMIN_OPERATIONS[operation](api_client(outsider), admin_operation_ids)
    assert refused.json() == NOT_FOUND
    assert written() == before
    assert api_client(outsider).get(members_url()).json() == NOT_FOUND


def test_an_installation_token_is_refused(org_admin, organization):
    installation = installation_create(
        user=org_admin,
        integration=IntegrationFactory(organization=organization),
        organization=organization,
    )
    client = api_client(token=installation.api_token)
    assert client.get(members_url()).status_code == 403
    invited = client.post(invitations_url(), {"email": "x@example.com", "role": "admin"})
    assert invited.status_code == 403


def test_an_admin_demoted_meanwhile_changes_nobody(org_admin, org_member, organization):
    assert access.role_of(org_admin, organization) == "admin"  # as the request read it
    other_admin = MembershipFactory(organization=organization, role="admin").user
    membership_role_change(
        organization=organization, username=org_admin.username, role="reader", actor=other_admin
    )
    with pytest.raises(PermissionDenied):
        membership_remove(organization=organization, username=org_member.username, actor=org_admin)
    assert access.membership_of(organization, org_member.username) is not None


def test_an_operators_command_changes_roles_recorded_as_the_operator(org_member, organization):
    membership_role_change(
        organization=organization, username=org_member.username, role="admin", actor=None
    )
    assert access.membership_of(organization, org_member.username).role == "admin"
    row = AuditEntry.objects.get()
    assert (row.actor_kind, row.action) == ("operator", "member.role_changed")
