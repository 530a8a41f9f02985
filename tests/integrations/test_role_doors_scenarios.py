"""The hostile reader of the issue (dave, a reader of acme) refused at every door he tried, the
organization setting that lets members install what writes nothing, and the audit rows of
integrations: each action leaves exactly one, naming who did it (a person, the installation's
token, the operator) and never a secret."""

import json

import pytest
from django.contrib.auth import get_user_model
from django.test import Client

from docplatform.audit.models import AuditEntry
from docplatform.events.models import Delivery
from integrations.models import Installation
from tests.api_helpers import API, api_client
from tests.integrations.doors import written
from webhooks.services.signing_secrets import signing_secret_current

pytestmark = pytest.mark.django_db


@pytest.fixture
def dave(world):
    return world.people["reader"]


def test_dave_cannot_install_a_writing_integration_into_a_space(world, dave):
    before = written()
    for url in (f"{API}/spaces/{world.space.pk}/installations/", f"{API}/orgs/acme/installations/"):
        response = api_client(dave).post(url, {"integration": "writer"})
        assert response.status_code == 403
        assert "admins" in response.json()["errors"][0]["detail"]
    assert not Installation.objects.filter(integration=world.writer).exists()
    assert written() == before


def test_dave_cannot_point_the_webhook_elsewhere(world, dave):
    url = f"{API}/installations/{world.hook.pk}/configuration/"
    response = api_client(dave).patch(url, {"url": "https://dave.example/steal"})
    assert response.status_code == 403
    world.hook.refresh_from_db()
    assert "dave.example" not in json.dumps(world.hook.configuration)


def test_dave_cannot_read_attempts_redeliver_or_ping(world, dave):
    client = api_client(dave)
    before = written()
    assert client.get(f"{API}/deliveries/{world.delivery.pk}/").status_code == 403
    assert client.get(f"{API}/installations/{world.hook.pk}/deliveries/").status_code == 403
    assert client.post(f"{API}/deliveries/{world.delivery.pk}/redeliver/").status_code == 403
    assert client.post(f"{API}/installations/{world.hook.pk}/webhook/ping/").status_code == 403
    assert written() == before
    assert Delivery.objects.get(pk=world.delivery.pk).chain == 1


# --- Members install what writes nothing, where the organization lets them ---------------------


def install_as(person, world, name: str):
    url = f"{API}/spaces/{world.space.pk}/installations/"
    body = {"integration": name, "configuration": {"url": "https://hooks.example/x"}}
    return api_client(person).post(url, body if name == "webhook" else {"integration": name})


def test_members_install_only_what_writes_nothing_and_only_when_allowed(world):
    member, reader = world.people["member"], world.people["reader"]
    world.hook.delete()  # the space has no webhook yet
    refused = install_as(member, world, "webhook")
    assert refused.status_code == 403  # off by default

    world.organization.members_may_install = True
    world.organization.save()
    assert install_as(reader, world, "webhook").status_code == 403  # readers never
    installed = install_as(member, world, "webhook")
    assert installed.status_code == 201, installed.content
    writing = install_as(member, world, "writer")
    assert writing.status_code == 403
    assert "writes" in writing.json()["errors"][0]["detail"]
    assert not Installation.objects.filter(integration=world.writer).exists()


# --- One audit row per action -------------------------------------------------------------------


def rows_after(do) -> list[AuditEntry]:
    """The audit rows that doing ``do()`` wrote."""
    seen = set(AuditEntry.objects.values_list("pk", flat=True))
    do()
    return list(AuditEntry.objects.exclude(pk__in=seen))


def one_row(do, action: str) -> AuditEntry:
    rows = rows_after(do)
    assert [row.action for row in rows] == [action]
    return rows[0]


def test_each_installation_action_leaves_one_row_naming_the_admin(world):
    admin = world.people["admin"]
    client = api_client(admin)
    tool = f"{API}/installations/{world.tool_installation.pk}"
    hook = f"{API}/installations/{world.hook.pk}"

    created = one_row(
        lambda: client.post(
            f"{API}/spaces/{world.space.pk}/installations/", {"integration": "writer"}
        ),
        "installation.created",
    )
    assert created.details == {
        "level": "space",
        "space": world.space.pk,
        "scopes": ["space:content:write"],
    }
    assert (created.actor_kind, created.actor_user) == ("person", admin)
    configured = one_row(
        lambda: client.patch(f"{tool}/configuration/", {"label": "Secret label"}),
        "installation.configured",
    )
    assert configured.details == {"properties": ["label"]}
    disconnected = one_row(
        lambda: client.post(f"{tool}/oauth/disconnect/", {"property": "slack"}),
        "installation.configured",
    )
    assert disconnected.details == {"properties": ["slack"]}
    selected = one_row(
        lambda: client.put(f"{tool}/space-selection/", {"spaceSelection": "all"}),
        "installation.configured",
    )
    assert selected.details == {"spaceSelection": "all", "selectedSpaces": []}
    granted = one_row(
        lambda: client.post(f"{tool}/approve-scopes/", {}), "installation.scopes_granted"
    )
    assert granted.details == {"scopes": ["space:content:write"]}
    old_url = world.hook.configuration["url"]
    moved = one_row(
        lambda: client.patch(
            f"{hook}/configuration/", {"url": "https://hooks.example/new", "traceparent": True}
        ),
        "webhook.url_changed",
    )
    assert moved.details == {
        "from": old_url,
        "to": "https://hooks.example/new",
        "properties": ["traceparent"],
    }
    rotated = one_row(
        lambda: client.post(f"{hook}/webhook/secret/rotate/"), "webhook.secret_rotated"
    )
    assert rotated.details == {}
    one_row(lambda: client.post(f"{hook}/pause/"), "installation.paused")
    one_row(lambda: client.post(f"{hook}/resume/"), "installation.resumed")
    one_row(lambda: client.delete(f"{hook}/"), "installation.uninstalled")

    audited = json.dumps(list(AuditEntry.objects.values("details", "target_label")))
    for secret in ("Secret label", "connected", signing_secret_current(world.site_hook)):
        assert secret not in audited


def test_an_installation_token_changing_its_own_installation_is_its_actor(world):
    installation = world.tool_installation
    token = api_client(token=installation.api_token)
    row = one_row(
        lambda: token.patch(
            f"{API}/installation/",
            {"configuration": {"label": "Docs"}, "externalIds": ["acct-7"]},
        ),
        "installation.configured",
    )
    assert (row.actor_kind, row.actor_id) == ("installation", installation.pk)
    assert row.details == {"properties": ["label"], "externalIds": ["acct-7"]}
    # Its token changes no other installation.
    other = f"{API}/installations/{world.hook.pk}/configuration/"
    assert token.patch(other, {"url": "https://x.example/"}).status_code == 403
    world.hook.refresh_from_db()
    assert world.hook.configuration["url"] != "https://x.example/"


def test_an_operator_pausing_in_the_admin_is_its_actor(world):
    operator = get_user_model().objects.create_superuser("root", "root@example.com", "pw")
    admin_site = Client()
    admin_site.force_login(operator)
    row = one_row(
        lambda: admin_site.post(
            "/admin/integrations/installation/",
            {"action": "pause", "_selected_action": [world.hook.pk]},
        ),
        "installation.paused",
    )
    assert (row.actor_kind, row.actor_user, row.actor_label) == ("operator", operator, "root")
