"""Each permission rule has one home in ``integrations.policies``, and every door that decides
it asks that home: the rule is replaced in that one place (and wherever a module imported it
by name, which is still that one function) and each door follows, the REST API, the
marketplace's pages and the services alike. A door that re-derived the rule would not."""

import sys

import pytest
from django.test import Client

from docplatform.events.models import Delivery
from docplatform.models import Space
from docplatform.services import space_content_update
from integrations import policies
from integrations.services.installations import installation_create
from tests.api_helpers import API, api_client
from tests.factories import SpaceFactory

pytestmark = pytest.mark.django_db


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


def page(user, path: str):
    browser = Client()
    browser.force_login(user)
    return browser.get(path)


def test_reading_logs_follows_its_rule_at_every_door(monkeypatch, installation, org_admin):
    api = api_client(org_admin)
    logs = f"/marketplace/orgs/acme/installations/{installation.pk}/logs/"
    overview = f"/marketplace/orgs/acme/installations/{installation.pk}/"
    assert api.get(f"{API}/installations/{installation.pk}/logs/").status_code == 200
    assert api.get(f"{API}/integrations/hello/logs/").status_code == 200
    assert page(org_admin, logs).status_code == 200
    assert b"logs-link" in page(org_admin, overview).content

    assert replace_rule(monkeypatch, policies.may_read_installation_logs, never) >= 3
    assert replace_rule(monkeypatch, policies.may_read_integration_logs, never) >= 3
    assert api.get(f"{API}/installations/{installation.pk}/logs/").status_code == 403
    assert api.get(f"{API}/integrations/hello/logs/").status_code == 403
    assert page(org_admin, logs).status_code == 403
    assert page(org_admin, "/marketplace/orgs/acme/integrations/hello/logs/").status_code == 403
    assert b"logs-link" not in page(org_admin, overview).content


def test_publishing_follows_its_rule_at_every_door(monkeypatch, installation, org_admin):
    api = api_client(org_admin)
    assert api.get(f"{API}/integrations/hello/install-link/").status_code == 200
    assert api.post(f"{API}/integrations/hello/versions/1/release/").status_code == 200

    assert replace_rule(monkeypatch, policies.may_publish, never) >= 4
    assert api.get(f"{API}/integrations/hello/install-link/").status_code == 403
    assert api.post(f"{API}/integrations/hello/versions/1/release/").status_code == 403
    development = api.post(
        f"{API}/installations/{installation.pk}/development/", {"development": True}
    )
    assert development.status_code == 403


def test_sending_test_events_and_approving_scopes_follow_their_rules(
    monkeypatch, installation, org_admin
):
    api = api_client(org_admin)
    events = f"{API}/installations/{installation.pk}/test-events/"
    assert api.post(events, {"type": "space_content_updated"}).status_code == 201

    assert replace_rule(monkeypatch, policies.may_send_test_events, never) >= 1
    assert replace_rule(monkeypatch, policies.may_approve_scopes, never) >= 2
    assert api.post(events, {"type": "space_content_updated"}).status_code == 403
    approve = api.post(f"{API}/installations/{installation.pk}/approve-scopes/", {})
    assert approve.status_code == 403


def test_installing_follows_its_rule(monkeypatch, hello, org_admin):
    api = api_client(org_admin)
    assert replace_rule(monkeypatch, policies.may_install, never) >= 1
    refused = api.post(f"{API}/orgs/acme/installations/", {"integration": "hello"})
    assert refused.status_code == 404


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
