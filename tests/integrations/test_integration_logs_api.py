"""The integration-logs API: who reads which lines, the filters, the follow cursor and bad
parameters (the lines written by the logs service, as the gateway writes them)."""

from datetime import timedelta

import pytest
from django.utils import timezone

from integrations.gateway.log_store import CallRecord, integration_log_record
from integrations.models import IntegrationLog
from integrations.operators import OPERATOR
from integrations.services.installations import installation_create
from integrations.services.logs import integration_logs_purge
from tests.api_helpers import API, NOT_FOUND, api_client
from tests.factories import (
    IntegrationFactory,
    MembershipFactory,
    OrganizationFactory,
    SpaceFactory,
    UserFactory,
)

pytestmark = pytest.mark.django_db


def record(installation, *, integration=None, when=None, **fields) -> IntegrationLog:
    integration = integration or installation.integration
    values = {
        "kind": "event",
        "event": "space_content_updated",
        "request": "",
        "outcome": "ok",
        "status": 200,
        "duration_ms": 12,
        **fields,
    }
    return integration_log_record(
        CallRecord(
            version=integration.latest_version,
            installation=installation,
            started_at=when or timezone.now(),
            **values,
        )
    )


@pytest.fixture
def owner(organization):
    """An admin of acme, which owns the integration."""
    return MembershipFactory(organization=organization, role="admin").user


@pytest.fixture
def setup(organization, owner):
    integration = IntegrationFactory(name="logger", organization=organization)
    globex = OrganizationFactory(subdomain="globex")
    globex_admin = MembershipFactory(organization=globex, role="admin").user
    globex_member = MembershipFactory(organization=globex, role="member").user
    initech = OrganizationFactory(subdomain="initech")
    initech_admin = MembershipFactory(organization=initech, role="admin").user
    ours = installation_create(user=owner, integration=integration, organization=organization)
    theirs = installation_create(user=globex_admin, integration=integration, organization=globex)
    space = SpaceFactory(organization=globex)
    theirs_in_space = installation_create(
        user=globex_admin, integration=integration, organization=globex, space=space
    )
    others = installation_create(user=initech_admin, integration=integration, organization=initech)
    return {
        "integration": integration,
        "ours": ours,
        "theirs": theirs,
        "theirs_in_space": theirs_in_space,
        "others": others,
        "globex_admin": globex_admin,
        "globex_member": globex_member,
        "initech_admin": initech_admin,
    }


def get(user, url, **params):
    return api_client(user).get(url, params)


def test_owners_read_every_installation_and_admins_only_theirs(setup, owner):
    ours = record(setup["ours"], output="ours\n")
    theirs = record(setup["theirs"], output="theirs\n")
    in_space = record(setup["theirs_in_space"], output="in their space\n")
    others = record(setup["others"], output="others\n")
    answer = get(owner, f"{API}/integrations/logger/logs/")
    assert answer.status_code == 200, answer.json()
    body = answer.json()
    assert [item["id"] for item in body["items"]] == [ours.pk, theirs.pk, in_space.pk, others.pk]
    assert body["next"] == str(others.pk)
    item = body["items"][1]
    assert item == {
        "id": theirs.pk,
        "cursor": str(theirs.pk),
        "time": item["time"],
        "installationId": setup["theirs"].pk,
        "integration": "logger",
        "version": setup["integration"].latest_version.number,
        "kind": "event",
        "event": "space_content_updated",
        "test": False,
        "request": None,
        "outcome": "ok",
        "status": 200,
        "durationMs": 12,
        "output": "theirs\n",
        "error": None,
    }
    # The owners narrow to one installation (and those under it).
    narrowed = get(owner, f"{API}/integrations/logger/logs/", installation=setup["theirs"].pk)
    assert [item["output"] for item in narrowed.json()["items"]] == [
        "theirs\n",
        "in their space\n",
    ]
    # An installing organization's admin: their installation's lines only.
    mine = get(setup["globex_admin"], f"{API}/installations/{setup['theirs'].pk}/logs/")
    assert mine.status_code == 200
    assert [item["output"] for item in mine.json()["items"]] == ["theirs\n", "in their space\n"]
    space_only = get(
        setup["globex_admin"], f"{API}/installations/{setup['theirs_in_space'].pk}/logs/"
    )
    assert [item["output"] for item in space_only.json()["items"]] == ["in their space\n"]


def test_strangers_get_404_and_non_admins_403(setup, owner):
    stranger = UserFactory()
    for user in (stranger, setup["globex_admin"], setup["initech_admin"]):
        # Another organization's installation is not there for them.
        url = f"{API}/installations/{setup['ours'].pk}/logs/"
        answer = get(user, url)
        assert (answer.status_code, answer.json()) == (404, NOT_FOUND)
    # A member who is no admin of the installing organization.
    answer = get(setup["globex_member"], f"{API}/installations/{setup['theirs'].pk}/logs/")
    assert answer.status_code == 403
    # An integration's whole log: its owners only; another organization's is not there.
    answer = get(setup["globex_admin"], f"{API}/integrations/logger/logs/")
    assert (answer.status_code, answer.json()) == (404, NOT_FOUND)
    IntegrationFactory(name="secretive", visibility="private")
    answer = get(setup["globex_admin"], f"{API}/integrations/secretive/logs/")
    assert (answer.status_code, answer.json()) == (404, NOT_FOUND)
    assert api_client().get(f"{API}/integrations/logger/logs/").status_code in (401, 403)


def test_an_owner_cannot_narrow_to_another_integrations_installation(setup, owner, organization):
    other = IntegrationFactory(name="other", organization=organization)
    foreign = installation_create(user=owner, integration=other, organization=organization)
    answer = get(owner, f"{API}/integrations/logger/logs/", installation=foreign.pk)
    assert answer.status_code == 400
    assert answer.json()["errors"][0]["attr"] == "installation"


def test_filters_and_the_follow_cursor(setup, owner):
    theirs = setup["theirs"]
    old = record(theirs, when=timezone.now() - timedelta(hours=3), output="old\n")
    failed = record(theirs, outcome="error", status=500, error="Traceback ...\nValueError: x")
    fetched = record(
        theirs, kind="fetch", event="", request="GET /hook", status=201, output="fetched\n"
    )
    url = f"{API}/integrations/logger/logs/"
    by_kind = get(owner, url, kind="fetch").json()
    assert [item["id"] for item in by_kind["items"]] == [fetched.pk]
    assert by_kind["items"][0]["request"] == "GET /hook"
    by_outcome = get(owner, url, outcome="error").json()
    assert [item["id"] for item in by_outcome["items"]] == [failed.pk]
    assert by_outcome["items"][0]["error"] == "Traceback ...\nValueError: x"
    recent = get(owner, url, since="2h").json()
    assert [item["id"] for item in recent["items"]] == [failed.pk, fetched.pk]
    iso = (timezone.now() - timedelta(hours=4)).isoformat()
    assert len(get(owner, url, since=iso).json()["items"]) == 3
    # The latest `limit` lines, oldest first; then follow from the cursor.
    latest = get(owner, url, limit=2).json()
    assert [item["id"] for item in latest["items"]] == [failed.pk, fetched.pk]
    assert get(owner, url, after=str(old.pk), limit=1).json()["items"][0]["id"] == failed.pk
    cursor = latest["next"]
    quiet = get(owner, url, after=cursor).json()
    assert quiet == {"items": [], "next": cursor}
    newer = record(theirs, output="newer\n")
    followed = get(owner, url, after=cursor).json()
    assert [item["output"] for item in followed["items"]] == ["newer\n"]
    assert followed["next"] == str(newer.pk)
    # Nothing matched and no cursor given: next is the newest line, to follow from now.
    nothing = get(owner, url, kind="oauth").json()
    assert nothing == {"items": [], "next": str(newer.pk)}


@pytest.mark.parametrize(
    ("parameter", "value"),
    [
        ("after", "abc"),
        ("after", "-1"),
        ("after", "99999999999999999999"),
        ("since", "yesterday"),
        ("since", "15x"),
        ("since", "2026-13-45T99:00:00"),
        ("since", "9999999d"),
        ("kind", "shout"),
        ("outcome", "meh"),
        ("limit", "0"),
        ("limit", "501"),
        ("limit", "2.5"),
        ("limit", ""),
        ("installation", "x" * 40),
    ],
)
def test_bad_parameters_are_400_naming_the_parameter(setup, owner, parameter, value):
    answer = get(owner, f"{API}/integrations/logger/logs/", **{parameter: value})
    assert answer.status_code == 400, answer.json()
    assert [error["attr"] for error in answer.json()["errors"]] == [parameter]


def test_the_purge_keeps_recent_lines(setup, settings):
    settings.INTEGRATION_LOG_RETENTION_DAYS = 7
    theirs = setup["theirs"]
    record(theirs, when=timezone.now() - timedelta(days=8), output="stale\n")
    record(theirs, when=timezone.now() - timedelta(days=6, hours=23), output="recent\n")
    record(theirs, output="now\n")
    assert integration_logs_purge() == 1
    assert sorted(IntegrationLog.objects.values_list("output", flat=True)) == ["now\n", "recent\n"]


def test_text_any_database_stores_and_the_limits(setup):
    line = record(
        setup["theirs"],
        output="nul\x00here \ud800" + "x" * 10_000,
        error="E" * 20_000,
        request="GET /" + "p" * 900,
    )
    line.refresh_from_db()
    assert line.output.startswith("nul\ufffdhere ?")
    assert len(line.output) < IntegrationLog.OUTPUT_LIMIT + 300 and line.output.endswith("[cut]")
    assert len(line.error) < IntegrationLog.ERROR_LIMIT + 10
    assert len(line.request) <= 500


@pytest.mark.slow
def test_the_admin_shows_lines_read_only_and_escaped(setup, client):
    line = record(setup["theirs"], output="<script>alert(1)</script>\n", error="boom")
    operator = UserFactory(is_staff=True, is_superuser=True)
    client.force_login(operator)
    listing = client.get("/admin/integrations/integrationlog/", {"outcome": "ok"})
    assert listing.status_code == 200
    assert [row.pk for row in listing.context["cl"].result_list] == [line.pk]
    detail = client.get(f"/admin/integrations/integrationlog/{line.pk}/change/")
    assert detail.status_code == 200
    assert b"&lt;script&gt;alert(1)&lt;/script&gt;" in detail.content
    assert b"<script>alert(1)" not in detail.content
    assert client.get("/admin/integrations/integrationlog/add/").status_code == 403
    deleted = client.post(f"/admin/integrations/integrationlog/{line.pk}/delete/", {"post": "yes"})
    assert deleted.status_code == 403 and IntegrationLog.objects.filter(pk=line.pk).exists()


def test_the_purge_runs_periodically_as_a_task(setup, settings):
    from integrations.tasks import purge_logs

    schedule = settings.CELERY_BEAT_SCHEDULE["purge-integration-logs"]
    assert schedule["task"] == purge_logs.name == "integrations.tasks.purge_logs"
    record(setup["theirs"], when=timezone.now() - timedelta(days=30), output="stale\n")
    kept = record(setup["theirs"], output="kept\n")
    assert purge_logs() == 1
    assert list(IntegrationLog.objects.values_list("pk", flat=True)) == [kept.pk]


def test_uninstalling_removes_the_installations_lines(setup, owner):
    from integrations.services.installations import installation_uninstall

    record(setup["theirs"], output="theirs\n")
    record(setup["theirs_in_space"], output="in their space\n")
    kept = record(setup["ours"], output="ours\n")
    installation_uninstall(user=OPERATOR, installation=setup["theirs"])
    assert list(IntegrationLog.objects.values_list("pk", flat=True)) == [kept.pk]
