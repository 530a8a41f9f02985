"""The Logs tab: an installation's log for its organization's admins, an integration's whole
log for its owners; nobody else's lines, output shown as text, bad filters said."""

import pytest
from django.utils import timezone

from integrations.gateway.log_store import CallRecord, integration_log_record
from integrations.services.installations import installation_create
from tests.factories import IntegrationFactory, MembershipFactory, OrganizationFactory

pytestmark = pytest.mark.django_db


def record(installation, **fields):
    values = {
        "kind": "fetch",
        "event": "",
        "request": "GET /hook",
        "outcome": "ok",
        "status": 200,
        "duration_ms": 3,
        "output": "",
        **fields,
    }
    return integration_log_record(
        CallRecord(
            version=installation.integration.latest_version,
            installation=installation,
            started_at=timezone.now(),
            **values,
        )
    )


@pytest.fixture
def logged(organization, org_admin):
    """logger, owned by acme, installed by acme and by globex; another integration too."""
    logger = IntegrationFactory(name="logger", title="Logger", organization=organization)
    other = IntegrationFactory(name="other", title="Other", organization=organization)
    globex = OrganizationFactory(subdomain="globex", title="Globex")
    globex_admin = MembershipFactory(organization=globex, role="admin").user
    ours = installation_create(user=org_admin, integration=logger, organization=organization)
    theirs = installation_create(user=globex_admin, integration=logger, organization=globex)
    other_installation = installation_create(
        user=org_admin, integration=other, organization=organization
    )
    record(ours, output="acme line\n")
    record(theirs, output="globex <b>line</b>\n", outcome="error", error="Traceback\nE: x")
    record(other_installation, output="other integration\n")
    return {"ours": ours, "theirs": theirs, "globex_admin": globex_admin}


def test_an_admin_sees_their_installations_lines_only(client, logged, org_admin):
    client.force_login(logged["globex_admin"])
    theirs = logged["theirs"]
    page = client.get(f"/marketplace/orgs/globex/installations/{theirs.pk}/")
    logs_url = f"/marketplace/orgs/globex/installations/{theirs.pk}/logs/"
    assert f'href="{logs_url}"'.encode() in page.content
    answer = client.get(logs_url)
    assert answer.status_code == 200
    text = answer.content.decode()
    assert "globex &lt;b&gt;line&lt;/b&gt;" in text and "<b>line</b>" not in text
    assert "Traceback\nE: x" in text
    assert "acme line" not in text and "other integration" not in text
    assert f'data-api-url="/api/v1/installations/{theirs.pk}/logs/"' in text
    # acme's installation is not globex's to see.
    ours = logged["ours"]
    assert client.get(f"/marketplace/orgs/globex/installations/{ours.pk}/logs/").status_code == 404
    assert client.get(f"/marketplace/orgs/acme/installations/{ours.pk}/logs/").status_code == 404


def test_a_member_who_is_no_admin_gets_403_and_no_link(client, logged, organization):
    member = MembershipFactory(organization=organization, role="member").user
    client.force_login(member)
    ours = logged["ours"]
    page = client.get(f"/marketplace/orgs/acme/installations/{ours.pk}/")
    assert page.status_code == 200 and b"logs-link" not in page.content
    assert client.get(f"/marketplace/orgs/acme/installations/{ours.pk}/logs/").status_code == 403
    assert client.get("/marketplace/orgs/acme/integrations/logger/logs/").status_code == 403


def test_owners_see_every_installation_and_narrow_to_one(client, logged, org_admin):
    client.force_login(org_admin)
    page = client.get("/marketplace/orgs/acme/integrations/logger/")
    assert b'href="/marketplace/orgs/acme/integrations/logger/logs/"' in page.content
    answer = client.get("/marketplace/orgs/acme/integrations/logger/logs/")
    text = answer.content.decode()
    assert "acme line" in text and "globex &lt;b&gt;line" in text
    assert "other integration" not in text
    narrowed = client.get(
        "/marketplace/orgs/acme/integrations/logger/logs/",
        {"installation": logged["theirs"].pk, "outcome": "error"},
    ).content.decode()
    assert "globex &lt;b&gt;line" in narrowed and "acme line" not in narrowed
    assert f'data-filter-installation="{logged["theirs"].pk}"' in narrowed
    assert 'data-filter-outcome="error"' in narrowed


def test_another_organizations_admin_is_no_owner(client, logged):
    client.force_login(logged["globex_admin"])
    page = client.get("/marketplace/orgs/globex/integrations/logger/")
    assert page.status_code == 200 and b"logs-link" not in page.content
    assert client.get("/marketplace/orgs/globex/integrations/logger/logs/").status_code == 404
    assert client.get("/marketplace/orgs/acme/integrations/logger/logs/").status_code == 404


def test_bad_filters_are_said(client, logged, org_admin):
    client.force_login(org_admin)
    answer = client.get(
        "/marketplace/orgs/acme/integrations/logger/logs/", {"since": "soon", "kind": "shout"}
    )
    assert answer.status_code == 400
    text = answer.content.decode()
    assert "since: give an ISO 8601 time" in text
    assert "kind: &quot;shout&quot; is not a valid choice." in text
