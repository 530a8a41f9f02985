"""Each rule has one home, and every door that decides it asks that home: who may act is the
roles' table (``docplatform.access.TABLE``), asked through ``integrations.policies``; the
table is changed in that one place and each door follows, the REST API, the marketplace's
pages and the services alike. A door that re-derived the rule would not. The whole table,
role by role and door by door, is ``test_role_doors``."""

import sys

import pytest
from django.test import Client

from docplatform import access
from docplatform.access import Action
from docplatform.events.models import Delivery
from docplatform.models import Space
from docplatform.revisions import space_content_update
from integrations import policies
from integrations.services.installations import installation_create
from tests.api_helpers import API, api_client
from tests.factories import MembershipFactory, SpaceFactory

pytestmark = pytest.mark.django_db

#: Every role: what an action's row becomes when the tests widen it.
EVERYONE = frozenset(access.ROLES)


def replace_rule(monkeypatch, rule, replacement) -> int:
    """Replace ``rule`` everywhere it is bound by name; how many modules held it."""
    holders = 0
    for module in list(sys.modules.values()):
        for name, value in list(vars(module).items() if module else ()):
            if value is rule:
                monkeypatch.setattr(module, name, replacement)
                holders += 1
    return holders


def never(*args, **kwargs) -> bool:
    return False


@pytest.fixture
def hello(publish, org_admin):
    return publish(org_admin, name="hello", scopes=["space:content:read"])


@pytest.fixture
def installation(hello, org_admin, organization):
    SpaceFactory(organization=organization)
    return installation_create(user=org_admin, integration=hello, organization=organization)


@pytest.fixture
def reader(organization):
    return MembershipFactory(organization=organization, role="reader").user


def page(user, path: str):
    browser = Client()
    browser.force_login(user)
    return browser.get(path)


def test_reading_logs_follows_the_table_at_every_door(monkeypatch, installation, reader):
    api = api_client(reader)
    logs = f"/marketplace/orgs/acme/installations/{installation.pk}/logs/"
    overview = f"/marketplace/orgs/acme/installations/{installation.pk}/"
    assert api.get(f"{API}/installations/{installation.pk}/logs/").status_code == 403
    assert api.get(f"{API}/integrations/hello/logs/").status_code == 403
    assert page(reader, logs).status_code == 403
    assert b"logs-link" not in page(reader, overview).content

    monkeypatch.setitem(access.TABLE, Action.READ_LOGS, EVERYONE)
    assert api.get(f"{API}/installations/{installation.pk}/logs/").status_code == 200
    assert api.get(f"{API}/integrations/hello/logs/").status_code == 200
    assert page(reader, logs).status_code == 200
    assert page(reader, "/marketplace/orgs/acme/integrations/hello/logs/").status_code == 200
    assert b"logs-link" in page(reader, overview).content


def test_publishing_follows_the_table_at_every_door(monkeypatch, installation, reader):
    api = api_client(reader)
    development = f"{API}/installations/{installation.pk}/development/"
    assert api.get(f"{API}/integrations/hello/install-link/").status_code == 403
    assert api.post(f"{API}/integrations/hello/versions/1/release/").status_code == 403
    assert api.post(development, {"development": True}).status_code == 403

    monkeypatch.setitem(access.TABLE, Action.PUBLISH, EVERYONE)
    monkeypatch.setitem(access.TABLE, Action.CONFIGURE, EVERYONE)
    assert api.get(f"{API}/integrations/hello/install-link/").status_code == 200
    assert api.post(f"{API}/integrations/hello/versions/1/release/").status_code == 200
    assert api.post(development, {"development": True}).status_code == 200


def test_sending_test_events_and_approving_scopes_follow_the_table(
    monkeypatch, installation, reader
):
    api = api_client(reader)
    events = f"{API}/installations/{installation.pk}/test-events/"
    approve = f"{API}/installations/{installation.pk}/approve-scopes/"
    assert api.post(events, {"type": "space_content_updated"}).status_code == 403
    assert api.post(approve, {}).status_code == 403

    monkeypatch.setitem(access.TABLE, Action.SEND_TEST_EVENTS, EVERYONE)
    monkeypatch.setitem(access.TABLE, Action.APPROVE_SCOPES, EVERYONE)
    assert api.post(events, {"type": "space_content_updated"}).status_code == 201
    assert api.post(approve, {}).status_code == 400  # let in: there is nothing to approve


def test_installing_follows_the_table(monkeypatch, hello, reader):
    api = api_client(reader)
    overview = "/marketplace/orgs/acme/integrations/hello/"
    assert api.post(f"{API}/orgs/acme/installations/", {"integration": "hello"}).status_code == 403
    assert b"install-refusal" in page(reader, overview).content

    monkeypatch.setitem(access.TABLE, Action.INSTALL, EVERYONE)
    assert b"install-refusal" not in page(reader, overview).content
    assert api.post(f"{API}/orgs/acme/installations/", {"integration": "hello"}).status_code == 201


def test_configuring_follows_the_table_at_every_door(monkeypatch, installation, reader):
    configuration = f"{API}/installations/{installation.pk}/configuration/"
    overview = f"/marketplace/orgs/acme/installations/{installation.pk}/"
    assert api_client(reader).patch(configuration, {}).status_code == 403
    assert b"configure-refusal" in page(reader, overview).content

    monkeypatch.setitem(access.TABLE, Action.CONFIGURE, EVERYONE)
    assert api_client(reader).patch(configuration, {}).status_code == 400  # let in: empty
    assert b"configure-refusal" not in page(reader, overview).content


def test_receiving_follows_its_rule_at_every_door(monkeypatch, installation, org_admin):
    """``statuses_receiving`` decides for the router (rows read as tuples), the effective
    status the API shows, and the test events' check alike."""
    space = Space.objects.get()
    api = api_client(org_admin)
    assert replace_rule(monkeypatch, policies.statuses_receiving, never) >= 2

    space_content_update(space=space, pages=[{"path": "a", "title": "A", "body": "a"}])
    assert not Delivery.objects.filter(event__type="space_content_updated").exists()
    shown = api.get(f"{API}/installations/{installation.pk}/").json()
    assert shown["status"] == "pending"
    sent = api.post(
        f"{API}/installations/{installation.pk}/test-events/", {"type": "space_content_updated"}
    )
    assert (sent.status_code, sent.json()["errors"][0]["attr"]) == (400, "status")
