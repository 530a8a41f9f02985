"""``GET /api/v1/orgs/{org}/audit-log/``: the log of an organization for its admins, newest
first, filtered by actor, action and time, paged, each row in the shape the schema says."""

from datetime import timedelta

import pytest

from docplatform.audit.models import AuditEntry
from tests.api_helpers import API, NOT_FOUND, api_client, error_attrs
from tests.docplatform.audit.conftest import START

pytestmark = pytest.mark.django_db

AUDIT_LOG = f"{API}/orgs/acme/audit-log/"


def actions(response) -> list[str]:
    assert response.status_code == 200, response.content
    return [row["action"] for row in response.json()["results"]]


def test_an_admin_reads_the_log_newest_first_with_its_own_peoples_rows(org_admin, log):
    body = api_client(org_admin).get(AUDIT_LOG).json()
    assert body["count"] == 5
    assert [row["action"] for row in body["results"]] == [
        "token.created",  # org_member's own row (no organization): acme's person
        "invitation.revoked",
        "installation.configured",
        "invitation.created",
        "space.created",
    ]
    assert log["globex"].pk not in [row["id"] for row in body["results"]]


def test_each_row_names_its_actor_target_time_details_and_address(org_admin, log, installation):
    rows = {row["action"]: row for row in api_client(org_admin).get(AUDIT_LOG).json()["results"]}
    entry = log["invitation.created"]
    assert rows["invitation.created"] == {
        "id": entry.pk,
        "at": entry.at.isoformat().replace("+00:00", "Z"),
        "actor": {"kind": "person", "id": str(org_admin.pk), "name": org_admin.username},
        "action": "invitation.created",
        "target": {"type": "organization", "id": entry.organization_id, "name": "bob@example.com"},
        "details": {"email": "bob@example.com", "role": "member"},
        "address": None,  # recorded outside any request
    }
    assert rows["installation.configured"]["actor"] == {
        "kind": "installation",
        "id": installation.pk,
        "name": f"Bot (installation {installation.pk})",
    }
    assert rows["installation.configured"]["target"]["type"] == "installation"
    assert rows["invitation.revoked"]["actor"] == {
        "kind": "operator",
        "id": None,
        "name": "operator",
    }


def test_a_persons_own_rows_stay_out_of_organizations_they_do_not_belong_to(globex_admin, log):
    listed = actions(api_client(globex_admin).get(f"{API}/orgs/globex/audit-log/"))
    assert listed == ["space.created"]  # globex's own; not org_member's token


@pytest.mark.parametrize(
    ("actor", "expected"),
    [
        ("admin", ["invitation.created", "space.created"]),
        ("installation", ["installation.configured"]),
        ("operator", ["invitation.revoked"]),
        ("nobody-at-all", []),
    ],
)
def test_the_actor_filter_takes_a_username_or_an_installation_id(
    org_admin, installation, log, actor, expected
):
    value = {"admin": org_admin.username, "installation": installation.pk}.get(actor, actor)
    assert actions(api_client(org_admin).get(AUDIT_LOG, {"actor": value})) == expected


@pytest.mark.parametrize(
    ("action", "expected"),
    [
        ("invitation", ["invitation.revoked", "invitation.created"]),
        ("invitation.created", ["invitation.created"]),
        ("invit", []),  # a prefix is a whole first word, not any beginning
        ("space.created", ["space.created"]),
    ],
)
def test_the_action_filter_takes_an_action_or_its_first_word(org_admin, log, action, expected):
    assert actions(api_client(org_admin).get(AUDIT_LOG, {"action": action})) == expected


def test_the_time_filters_keep_since_and_drop_until(org_admin, log):
    since = (START + timedelta(days=1)).isoformat()
    until = (START + timedelta(days=3)).isoformat()
    client = api_client(org_admin)
    assert actions(client.get(AUDIT_LOG, {"since": since, "until": until})) == [
        "installation.configured",
        "invitation.created",
    ]
    assert actions(client.get(AUDIT_LOG, {"until": since})) == ["space.created"]
    # An offset other than UTC's is read as such: day 4 at 01:00+02:00 is day 3 at 23:00 UTC.
    day_four = (START + timedelta(days=4, hours=1)).strftime("%Y-%m-%dT%H:%M:%S+02:00")
    assert actions(client.get(AUDIT_LOG, {"since": day_four})) == ["token.created"]


def test_filters_combine(org_admin, log):
    query = {"actor": org_admin.username, "action": "invitation"}
    assert actions(api_client(org_admin).get(AUDIT_LOG, query)) == ["invitation.created"]


def test_the_log_pages_newest_first(org_admin, log):
    client = api_client(org_admin)
    first = client.get(AUDIT_LOG, {"limit": 2}).json()
    assert first["count"] == 5 and first["previous"] is None
    assert [row["action"] for row in first["results"]] == ["token.created", "invitation.revoked"]
    second = client.get(first["next"]).json()
    assert [row["action"] for row in second["results"]] == [
        "installation.configured",
        "invitation.created",
    ]
    last = client.get(AUDIT_LOG, {"limit": 2, "offset": 4}).json()
    assert [row["action"] for row in last["results"]] == ["space.created"]
    assert last["next"] is None


def test_rows_at_the_same_time_keep_one_order_across_pages(org_admin, log):
    AuditEntry.objects.update(at=START)
    client = api_client(org_admin)
    paged = [
        row["id"]
        for offset in range(0, 5, 2)
        for row in client.get(AUDIT_LOG, {"limit": 2, "offset": offset}).json()["results"]
    ]
    assert paged == sorted(paged, reverse=True) and len(set(paged)) == 5


@pytest.mark.parametrize(
    ("query", "attr"),
    [
        ({"since": "yesterday"}, "since"),
        ({"until": "2026-13-01T00:00:00Z"}, "until"),
        ({"since": "0001-01-01T00:00:00+05:00"}, "since"),  # before the first instant
        ({"since": ""}, "since"),
        ({"action": "Invitation Created"}, "action"),
        ({"action": "invitation."}, "action"),
        ({"action": "a" * 65}, "action"),
        ({"actor": ""}, "actor"),
        ({"actor": "x" * 201}, "actor"),
        ({"actor": "a\x00b"}, "actor"),
        ({"since": "2026-03-02T00:00:00Z", "until": "2026-03-01T00:00:00Z"}, "until"),
        ({"since": "2026-03-01T00:00:00Z", "until": "2026-03-01T00:00:00Z"}, "until"),
        ({"limit": "0"}, "limit"),
    ],
)
def test_a_bad_filter_is_a_400_naming_it(org_admin, log, query, attr):
    response = api_client(org_admin).get(AUDIT_LOG, query)
    assert response.status_code == 400, response.content
    assert error_attrs(response) == [attr]


def test_members_and_readers_are_refused_naming_who_may(org_member, org_reader, log):
    for person in (org_member, org_reader):
        response = api_client(person).get(AUDIT_LOG)
        assert response.status_code == 403
        assert response.json()["errors"][0]["detail"] == (
            "Only the organization's admins may read its audit log."
        )


def test_a_refused_member_learns_nothing_from_a_bad_filter(org_member, log):
    assert api_client(org_member).get(AUDIT_LOG, {"since": "nonsense"}).status_code == 403


def test_another_organizations_people_get_404_and_anonymous_callers_401(
    outsider, globex_admin, log
):
    for person in (outsider, globex_admin):
        response = api_client(person).get(AUDIT_LOG)
        assert response.status_code == 404
        assert response.json() == NOT_FOUND
    assert api_client().get(AUDIT_LOG).status_code == 401


def test_an_installation_token_is_refused(installation, log):
    response = api_client(token=installation.api_token).get(AUDIT_LOG)
    assert response.status_code == 403
    assert response.json()["errors"][0]["detail"] == (
        "An installation token cannot call this endpoint."
    )


def test_the_organization_may_be_named_by_its_id(org_admin, organization, log):
    assert len(actions(api_client(org_admin).get(f"{API}/orgs/{organization.pk}/audit-log/"))) == 5
