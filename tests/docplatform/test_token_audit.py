"""Personal tokens made and revoked leave one row each in their owner's audit log, whichever
door was used (the API, the marketplace, the admin); never the token itself."""

import pytest

from docplatform.audit.models import AuditEntry
from docplatform.models import ApiToken
from tests.api_helpers import API, api_client
from tests.factories import UserFactory

pytestmark = pytest.mark.django_db


def test_a_token_made_and_revoked_through_the_api_is_two_rows(org_admin):
    client = api_client(org_admin)
    made = client.post(f"{API}/me/tokens/", {"name": "laptop"}).json()
    [created] = AuditEntry.objects.filter(action="token.created")
    assert (created.actor_user, created.organization_id, created.target_id) == (
        org_admin,
        "",
        str(made["id"]),
    )
    assert created.details == {"name": "laptop", "expiresAt": None}
    assert made["token"] not in str(created.details) + created.target_label

    assert client.delete(f"{API}/me/tokens/{made['id']}/").status_code == 204
    client.delete(f"{API}/me/tokens/{made['id']}/")  # again: nothing more happens
    [revoked] = AuditEntry.objects.filter(action="token.revoked")
    assert (revoked.actor_user, revoked.details) == (org_admin, {"name": "laptop"})
    assert AuditEntry.objects.count() == 2


def test_a_refused_token_leaves_no_row(org_admin):
    response = api_client(org_admin).post(f"{API}/me/tokens/", {"name": "  "})
    assert response.status_code == 400
    assert not ApiToken.objects.exists()
    assert not AuditEntry.objects.exists()


def test_an_operator_revoking_in_the_admin_is_the_actor(client, org_admin):
    made = api_client(org_admin).post(f"{API}/me/tokens/", {"name": "ci"}).json()
    operator = UserFactory(is_staff=True, is_superuser=True)
    client.force_login(operator)
    client.post(
        "/admin/docplatform/apitoken/",
        {"action": "revoke", "_selected_action": [made["id"]]},
    )
    assert ApiToken.objects.get().revoked_at is not None
    revoked = AuditEntry.objects.get(action="token.revoked")
    assert (revoked.actor_user, revoked.actor_kind) == (operator, "operator")
