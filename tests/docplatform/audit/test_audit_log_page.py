"""The Audit log page (``/orgs/<subdomain>/audit-log/``), its link in the top bar and the
operators' read-only view in the Django admin."""

from datetime import timedelta

import pytest
from django.test import Client

from docplatform.audit.models import AuditEntry
from docplatform.audit.services import audit_record
from tests.docplatform.audit.conftest import START
from tests.factories import UserFactory

pytestmark = pytest.mark.django_db

PAGE = "/orgs/acme/audit-log/"


def signed_in(user) -> Client:
    client = Client()
    client.force_login(user)
    return client


def listed(response) -> list[str]:
    assert response.status_code == 200, response.content.decode()
    return [entry.action for entry in response.context["page"].object_list]


def test_an_admin_reads_every_row_in_words(org_admin, org_member, installation, log):
    response = signed_in(org_admin).get(PAGE)
    assert listed(response) == [
        "token.created",
        "invitation.revoked",
        "installation.configured",
        "invitation.created",
        "space.created",
    ]
    page = response.content.decode()
    assert "<h1>Audit log</h1>" in page
    assert "email: bob@example.com; role: member" in page
    assert "properties: url, events" in page
    assert f"Bot (installation {installation.pk})" in page and ">Installation</span>" in page
    assert ">Operator</span>" in page
    assert org_member.username in page  # their own token, in the log of their organization
    assert log["globex"].target_label not in page


def test_details_read_as_words_times_included(org_admin, organization):
    details = {
        "role": {"from": "member", "to": "admin"},
        "expiresAt": "2026-03-08T12:00:00+02:00",
        "published": True,
        "spaces": [],
        "notATime": "2026-13-45T99:99Z",
    }
    audit_record(action="member.role_changed", actor=org_admin, target=org_admin,
                 organization=organization, details=details)  # fmt: skip
    assert (
        "expires at: 8 Mar 2026, 10:00 UTC; not a time: 2026-13-45T99:99Z; published: yes; "
        "role: from member, to admin; spaces: none"
    ) in signed_in(org_admin).get(PAGE).content.decode()


def test_the_address_column_shows_where_a_row_came_from(org_admin, log):
    AuditEntry.objects.filter(pk=log["space.created"].pk).update(address="203.0.113.7")
    page = signed_in(org_admin).get(PAGE).content.decode()
    assert 'data-label="Address"><span>203.0.113.7</span></td>' in page


def test_the_action_filter_offers_the_actions_seen_and_their_first_words(org_admin, log):
    response = signed_in(org_admin).get(PAGE)
    choices = response.context["filters"].fields["action"].choices
    assert choices == [
        ("", "Any action"),
        (
            "installation",
            [
                ("installation", "Any installation action"),
                ("installation.configured", "installation.configured"),
            ],
        ),
        (
            "invitation",
            [
                ("invitation", "Any invitation action"),
                ("invitation.created", "invitation.created"),
                ("invitation.revoked", "invitation.revoked"),
            ],
        ),
        ("space", [("space", "Any space action"), ("space.created", "space.created")]),
        ("token", [("token", "Any token action"), ("token.created", "token.created")]),
    ]
    assert 'value="invitation">Any invitation action</option>' in response.content.decode()


def test_filters_by_who_what_and_days(org_admin, installation, log):
    client = signed_in(org_admin)
    day = lambda n: (START + timedelta(days=n)).date().isoformat()  # noqa: E731
    for query, expected in [
        ({"action": "invitation"}, ["invitation.revoked", "invitation.created"]),
        ({"action": "space.created"}, ["space.created"]),
        ({"actor": org_admin.username}, ["invitation.created", "space.created"]),
        ({"actor": installation.pk}, ["installation.configured"]),
        ({"since": day(3)}, ["token.created", "invitation.revoked"]),
        ({"until": day(1)}, ["invitation.created", "space.created"]),  # the whole last day
        ({"since": day(1), "until": day(2)}, ["installation.configured", "invitation.created"]),
        ({"actor": org_admin.username, "action": "invitation"}, ["invitation.created"]),
        ({"until": "9999-12-31"}, listed(client.get(PAGE))),
    ]:
        assert listed(client.get(PAGE, query)) == expected, query
    filtered = client.get(PAGE, {"action": "space.created"}).content.decode()
    assert 'href="/orgs/acme/audit-log/" class="clear-filters">Clear</a>' in filtered
    assert "No row matches these filters." in client.get(PAGE, {"actor": "nobody"}).content.decode()


@pytest.mark.parametrize(
    ("query", "field", "message"),
    [
        ({"action": "space.deleted"}, "action", "space.deleted is not an action of this log"),
        ({"since": "yesterday"}, "since", "Enter a date as YYYY-MM-DD."),
        (
            {"since": "2026-03-02", "until": "2026-03-01"},
            "until",
            "The last day cannot come before the first.",
        ),
        ({"actor": "x" * 201}, "actor", "Ensure this value has at most 200 characters"),
    ],
)
def test_a_bad_filter_says_which_and_why(org_admin, log, query, field, message):
    response = signed_in(org_admin).get(PAGE, query)
    assert response.status_code == 400
    page = response.content.decode()
    assert f"<code>{field}</code>: " in page and message in page


def test_pages_of_50_keep_the_filters(org_admin, organization):
    AuditEntry.objects.all().delete()
    for number in range(55):
        audit_record(
            action="space.created", actor=org_admin, target=organization, target_label=f"#{number}"
        )
    client = signed_in(org_admin)
    first = client.get(PAGE, {"action": "space"})
    assert len(listed(first)) == 50
    page = first.content.decode()
    assert "Page 1 of 2 · 55 rows" in page
    assert 'href="?action=space&amp;page=2" rel="next"' in page
    second = client.get(PAGE, {"action": "space", "page": "2"})
    assert [entry.target_label for entry in second.context["page"].object_list] == [
        f"#{number}" for number in range(4, -1, -1)
    ]
    assert client.get(PAGE, {"page": "abc"}).status_code == 200  # the first page, no error


def test_an_empty_log_says_so(org_admin):
    assert "Nothing recorded yet." in signed_in(org_admin).get(PAGE).content.decode()


def test_members_and_readers_get_the_403_page_naming_who_may(org_member, org_reader, log):
    for person in (org_member, org_reader):
        response = signed_in(person).get(PAGE)
        assert response.status_code == 403
        assert "Only the organization&#x27;s admins may read its audit log." in (
            response.content.decode()
        )
        assert "bob@example.com" not in response.content.decode()


def test_anyone_else_gets_404_and_the_signed_out_the_sign_in(outsider, globex_admin, log):
    for person in (outsider, globex_admin):
        assert signed_in(person).get(PAGE).status_code == 404
    response = Client().get(PAGE)
    assert response.status_code == 302 and response["Location"].startswith("/marketplace/login/")


def test_the_organization_menu_links_the_audit_log_for_admins_only(
    org_admin, org_member, org_reader
):
    link = 'href="/orgs/acme/audit-log/"'
    catalogue = "/marketplace/orgs/acme/"
    assert link in signed_in(org_admin).get(catalogue).content.decode()
    on_its_page = signed_in(org_admin).get(PAGE).content.decode()
    assert f'{link} aria-current="page">Audit log</a>' in on_its_page
    for person in (org_member, org_reader):
        assert link not in signed_in(person).get(catalogue).content.decode()


# --- The operators' view --------------------------------------------------------------------


@pytest.fixture
def operator_client():
    return signed_in(UserFactory(is_staff=True, is_superuser=True))


def test_operators_list_filter_and_search_the_log_but_change_nothing(operator_client, log):
    changelist = "/admin/docplatform/auditentry/"
    response = operator_client.get(changelist)
    assert response.status_code == 200
    assert response.context["cl"].result_count == 6  # every organization's
    by_action = operator_client.get(changelist, {"action": "invitation.created"})
    assert by_action.context["cl"].result_count == 1
    by_kind = operator_client.get(changelist, {"actor_kind__exact": "installation"})
    assert by_kind.context["cl"].result_count == 1
    searched = operator_client.get(changelist, {"q": "bob@example.com"})
    assert searched.context["cl"].result_count == 2

    entry = log["space.created"]
    assert operator_client.get(f"{changelist}add/").status_code == 403
    change = operator_client.get(f"{changelist}{entry.pk}/change/")
    assert change.status_code == 200 and 'name="_save"' not in change.content.decode()
    assert operator_client.post(f"{changelist}{entry.pk}/change/", {}).status_code == 403
    assert (
        operator_client.post(f"{changelist}{entry.pk}/delete/", {"post": "yes"}).status_code == 403
    )
    assert AuditEntry.objects.filter(pk=entry.pk).exists()
