"""Installing and configuring through the REST API: who may do what, the setup flow, and bad
bodies. Every 404 is the same body, whatever the caller may or may not know."""

import pytest
from django.db import connection

from docplatform import access
from docplatform.access import Action
from docplatform.events.models import Delivery, Event
from integrations.models import Installation
from integrations.services.installations import installation_create
from tests.api_helpers import API, NOT_FOUND, api_client, error_attrs, row_counts
from tests.factories import MembershipFactory, OrganizationFactory, SiteFactory, SpaceFactory
from tests.integrations.connecting import connect

pytestmark = pytest.mark.django_db

SECRET = "xoxb-very-secret-access-token"
TOOL_CONFIGURATIONS = {
    "account": {
        "properties": {
            "tracking_id": {"type": "string", "title": "Tracking ID", "description": "d"},
            "region": {
                "type": "string",
                "title": "Region",
                "description": "d",
                "enum": ["eu", "us"],
                "default": "eu",
            },
            "slack": {
                "type": "button",
                "title": "Slack",
                "description": "d",
                "button_text": "Connect",
                "callback_url": "/oauth",
            },
        },
        "required": ["tracking_id"],
    },
    "site": {
        "properties": {
            "theme": {
                "type": "string",
                "title": "Theme",
                "description": "d",
                "enum": ["light", "dark"],
            }
        }
    },
}
CALLERS = ["anonymous", "other-organization", "reader", "member", "admin"]


@pytest.fixture
def globex(db):
    return OrganizationFactory(subdomain="globex")


@pytest.fixture
def other_member(globex):
    """A member of another organization (globex), not of acme."""
    return MembershipFactory(organization=globex, role="admin").user


@pytest.fixture
def places(organization, globex):
    """A space and a site (publishing the space) in acme and in globex."""
    result = {}
    for org in (organization, globex):
        space = SpaceFactory(organization=org)
        site = SiteFactory(organization=org)
        site.spaces.add(space)
        result[org.subdomain] = {"org": org, "space": space, "site": site}
    return result


@pytest.fixture
def make_tool(publish, org_admin):
    def make(visibility: str):
        return publish(
            org_admin,
            name="tool",
            visibility=visibility,
            configurations=TOOL_CONFIGURATIONS,
            approved=visibility == "public",
        )

    return make


@pytest.fixture
def callers(organization, org_member, org_admin, other_member):
    return {
        "anonymous": None,
        "other-organization": other_member,
        "reader": MembershipFactory(organization=organization, role="reader").user,
        "member": org_member,
        "admin": org_admin,
    }


def install_url(level: str, place: dict) -> str:
    if level == "organization":
        return f"{API}/orgs/{place['org'].subdomain}/installations/"
    return f"{API}/{level}s/{place[level].id}/installations/"


def assert_not_found_naming_nothing(response, *names):
    assert response.status_code == 404
    assert response.json() == NOT_FOUND
    for name in names:
        assert name.encode() not in response.content


# --- Installing: caller x visibility x level ------------------------------------------------

INSTALL_EXPECTED = {
    # visibility variant: status for (anonymous, other organization, reader, member, admin),
    # each installing into its own organization (anonymous: into acme); readers and members
    # are refused (admins install: ``test_role_doors`` has members installing what writes
    # nothing where their organization lets them)
    "private": (401, 404, 403, 403, 201),
    "unlisted": (401, 404, 403, 403, 201),
    "unlisted-with-token": (401, 201, 403, 403, 201),
    "public": (401, 201, 403, 403, 201),
}


@pytest.mark.slow
@pytest.mark.parametrize("level", ["organization", "space", "site"])
@pytest.mark.parametrize("variant", list(INSTALL_EXPECTED))
@pytest.mark.parametrize("caller", CALLERS)
def test_installing_into_ones_own_organization(make_tool, callers, places, caller, variant, level):
    tool = make_tool(variant.removesuffix("-with-token"))
    body = {"integration": "tool"}
    if variant.endswith("-with-token"):
        body["installToken"] = tool.install_link_token
    place = places["globex" if caller == "other-organization" else "acme"]
    before = row_counts()

    response = api_client(callers[caller]).post(install_url(level, place), body)

    expected = INSTALL_EXPECTED[variant][CALLERS.index(caller)]
    assert response.status_code == expected
    if expected == 201:
        installation = Installation.objects.get(pk=response.json()["id"])
        assert installation.organization == place["org"]
        assert installation.level == level
        assert response.json()["integration"] == "tool"
    else:
        assert row_counts() == before
    if expected == 404:
        assert_not_found_naming_nothing(response, "tool", "Tool")


@pytest.mark.parametrize("level", ["organization", "space", "site"])
@pytest.mark.parametrize("visibility", ["private", "unlisted", "public"])
def test_nobody_installs_into_an_organization_they_are_not_a_member_of(
    make_tool, other_member, places, visibility, level
):
    tool = make_tool(visibility)
    before = row_counts()
    response = api_client(other_member).post(
        install_url(level, places["acme"]),
        {"integration": "tool", "installToken": tool.install_link_token},
    )
    assert_not_found_naming_nothing(response, "tool", places["acme"]["space"].id)
    assert row_counts() == before


def test_an_unknown_integration_and_an_invisible_one_answer_the_same(
    publish, org_admin, other_member, places
):
    publish(org_admin, name="secret-tool", visibility="private")
    client = api_client(other_member)
    hidden = client.post(
        install_url("organization", places["globex"]), {"integration": "secret-tool"}
    )
    unknown = client.post(install_url("organization", places["globex"]), {"integration": "nothing"})
    assert hidden.status_code == unknown.status_code == 404
    assert hidden.content == unknown.content


def test_a_rotated_install_token_no_longer_installs(make_tool, org_admin, other_member, places):
    tool = make_tool("unlisted")
    old_token = tool.install_link_token
    rotated = api_client(org_admin).post(f"{API}/integrations/tool/install-link/rotate/")
    assert rotated.status_code == 200
    assert rotated.json()["installToken"] != old_token
    response = api_client(other_member).post(
        install_url("organization", places["globex"]),
        {"integration": "tool", "installToken": old_token},
    )
    assert response.status_code == 404


# --- An existing installation: caller x visibility x endpoint -------------------------------


def endpoint_calls(installation, delivery, place):
    """(method, url, body, the action, its status for whoever may) of every endpoint on an
    installation."""
    one = f"{API}/installations/{installation.id}"
    return {
        "list-organization": ("get", install_url("organization", place), None, Action.READ, 200),
        "list-space": ("get", install_url("space", place), None, Action.READ, 200),
        "list-site": ("get", install_url("site", place), None, Action.READ, 200),
        "detail": ("get", f"{one}/", None, Action.READ, 200),
        "configure": (
            "patch",
            f"{one}/configuration/",
            {"tracking_id": "UA-1"},
            Action.CONFIGURE,
            200,
        ),
        "space-selection": (
            "put",
            f"{one}/space-selection/",
            {"spaceSelection": "all"},
            Action.CONFIGURE,
            200,
        ),
        "pause": ("post", f"{one}/pause/", None, Action.PAUSE, 200),
        "resume": ("post", f"{one}/resume/", None, Action.PAUSE, 200),
        "deliveries": ("get", f"{one}/deliveries/", None, Action.READ_LOGS, 200),
        "delivery": ("get", f"{API}/deliveries/{delivery.id}/", None, Action.READ_LOGS, 200),
        "delete": ("delete", f"{one}/", None, Action.UNINSTALL, 204),
    }


ENDPOINTS = [
    "list-organization",
    "list-space",
    "list-site",
    "detail",
    "configure",
    "space-selection",
    "pause",
    "resume",
    "deliveries",
    "delivery",
    "delete",
]


@pytest.mark.slow
@pytest.mark.parametrize("endpoint", ENDPOINTS)
@pytest.mark.parametrize("visibility", ["private", "unlisted", "public"])
@pytest.mark.parametrize("caller", CALLERS)
def test_an_installation_is_seen_by_its_organizations_people_and_managed_by_its_admins(
    make_tool, callers, org_admin, places, caller, visibility, endpoint
):
    tool = make_tool(visibility)
    place = places["acme"]
    installation = installation_create(
        user=org_admin, integration=tool, organization=place["org"], site=place["site"]
    ).parent
    delivery = Delivery.objects.filter(installation=installation).first()
    method, url, body, action, allowed = endpoint_calls(installation, delivery, place)[endpoint]
    stored = Installation.objects.values().get(pk=installation.pk)

    response = getattr(api_client(callers[caller]), method)(url, body)

    if caller == "anonymous":
        assert response.status_code == 401
    elif caller == "other-organization":
        assert_not_found_naming_nothing(response, "tool", installation.id)
    elif caller not in access.TABLE[action]:
        assert response.status_code == 403
        assert response.json()["errors"][0]["detail"] == access.refusal(action)
    else:
        assert response.status_code == allowed
        if endpoint == "list-organization":
            assert installation.id in [row["id"] for row in response.json()["results"]]
        return
    assert Installation.objects.values().get(pk=installation.pk) == stored


def test_lists_hold_only_the_callers_organizations_rows(
    make_tool, org_admin, org_member, other_member, places
):
    tool = make_tool("public")
    ours = installation_create(user=org_admin, integration=tool, organization=places["acme"]["org"])
    theirs = installation_create(
        user=other_member, integration=tool, organization=places["globex"]["org"]
    )
    acme = api_client(org_member)
    listed = acme.get(install_url("organization", places["acme"])).json()["results"]
    assert [row["id"] for row in listed] == [ours.id]
    assert_not_found_naming_nothing(acme.get(install_url("organization", places["globex"])))
    assert_not_found_naming_nothing(acme.get(f"{API}/installations/{theirs.id}/"))
    their_delivery = Delivery.objects.filter(installation=theirs).first()
    assert_not_found_naming_nothing(acme.get(f"{API}/deliveries/{their_delivery.id}/"))

    globex = api_client(other_member)
    listed = globex.get(install_url("organization", places["globex"])).json()["results"]
    assert [row["id"] for row in listed] == [theirs.id]


# --- The setup flow -------------------------------------------------------------------------


def test_the_setup_flow_through_the_api(make_tool, org_admin, places):
    make_tool("private")
    client = api_client(org_admin)
    created = client.post(install_url("organization", places["acme"]), {"integration": "tool"})
    assert created.status_code == 201
    body = created.json()
    assert body["status"] == "pending"
    assert body["statusReasons"] == [
        {"path": "configuration.tracking_id", "message": "is required"}
    ]
    assert body["configuration"] == {"region": "eu"}
    assert body["spaceSelection"] == "all"
    assert body["selectedSpaces"] == []
    url = f"{API}/installations/{body['id']}/configuration/"

    events_before = Event.objects.count()
    refused = client.patch(url, {"tracking_id": "UA-1", "region": "mars"})
    assert refused.status_code == 400
    assert error_attrs(refused) == ["configuration.region"]
    installation = Installation.objects.get(pk=body["id"])
    assert installation.configuration == {"region": "eu"}
    assert installation.status == "pending"
    assert Event.objects.count() == events_before

    accepted = client.patch(url, {"tracking_id": "UA-1", "region": "us"})
    assert accepted.status_code == 200
    assert accepted.json()["status"] == "active"
    assert accepted.json()["statusReasons"] == []
    assert accepted.json()["configuration"] == {"region": "us", "tracking_id": "UA-1"}
    setup = Event.objects.filter(type="installation_setup").order_by("created_at").last()
    assert setup.payload["changed"] == ["region", "tracking_id"]
    assert setup.payload["status"] == "active"

    unset = client.patch(url, {"tracking_id": None})
    assert unset.json()["status"] == "pending"


def test_credentials_never_appear_in_responses_or_in_plaintext_in_the_database(
    make_tool, org_admin, places
):
    make_tool("private")
    client = api_client(org_admin)
    installation_id = client.post(
        install_url("organization", places["acme"]),
        {"integration": "tool", "configuration": {"tracking_id": "UA-1"}},
    ).json()["id"]
    connect(
        Installation.objects.get(pk=installation_id),
        member=org_admin,
        property_name="slack",
        credentials={"access_token": SECRET, "refresh_token": None},
    )
    response = client.get(f"{API}/installations/{installation_id}/")
    assert response.status_code == 200
    shown = response.json()["configuration"]["slack"]
    assert shown["connected"] is True and shown["connectedBy"] == org_admin.username

    responses = [
        response,
        client.get(f"{API}/installations/{installation_id}/"),
        client.get(install_url("organization", places["acme"])),
        client.post(f"{API}/installations/{installation_id}/pause/"),
        client.post(f"{API}/installations/{installation_id}/resume/"),
        client.get(f"{API}/installations/{installation_id}/deliveries/"),
        client.get(f"{API}/orgs/acme/events/"),
    ]
    for each in responses:
        assert each.status_code == 200
        assert SECRET not in each.content.decode()
    with connection.cursor() as cursor:
        cursor.execute("SELECT * FROM integrations_installation")
        rows = cursor.fetchall()
        cursor.execute("SELECT payload FROM docplatform_event")
        rows += cursor.fetchall()
    assert SECRET not in repr(rows)


def test_pausing_and_resuming(make_tool, org_admin, places):
    make_tool("private")
    client = api_client(org_admin)
    installation_id = client.post(
        install_url("organization", places["acme"]),
        {"integration": "tool", "configuration": {"tracking_id": "UA-1"}},
    ).json()["id"]
    paused = client.post(f"{API}/installations/{installation_id}/pause/")
    assert paused.json()["status"] == "paused"
    resumed = client.post(f"{API}/installations/{installation_id}/resume/")
    assert resumed.json()["status"] == "active"


def test_space_selection_and_uninstall(make_tool, org_admin, places):
    make_tool("private")
    client = api_client(org_admin)
    space = places["acme"]["space"]
    installation_id = client.post(
        install_url("organization", places["acme"]),
        {"integration": "tool", "spaceSelection": "selected", "selectedSpaces": [space.id]},
    ).json()["id"]
    url = f"{API}/installations/{installation_id}/"
    assert client.get(url).json()["selectedSpaces"] == [space.id]
    changed = client.put(f"{url}space-selection/", {"spaceSelection": "all"})
    assert changed.json()["spaceSelection"] == "all"
    assert changed.json()["selectedSpaces"] == []

    child = client.post(install_url("space", places["acme"]), {"integration": "tool"}).json()
    assert child["parent"] == installation_id
    assert child["spaceSelection"] is None
    assert client.delete(url).status_code == 204
    assert not Installation.objects.exists()


def test_an_installations_read_is_one_statement_with_the_callers_role(make_tool, org_admin, places):
    """``GET /installations/{id}/``: the installation, its organization installation's
    selection and the caller's role (for the role check) in one statement, compiled once; the
    same answer a list gives."""
    from django.test.utils import CaptureQueriesContext

    from docplatform.services import api_token_create

    make_tool("private")
    _, token = api_token_create(user=org_admin, name="reads")
    client = api_client(token=token)
    acme = places["acme"]
    chosen = sorted([acme["space"].id, SpaceFactory(organization=acme["org"]).id])
    installation_id = client.post(
        install_url("organization", acme),
        {"integration": "tool", "spaceSelection": "selected", "selectedSpaces": chosen[::-1]},
    ).json()["id"]
    url = f"{API}/installations/{installation_id}/"
    client.get(url)  # this process reads and keeps the running version
    with CaptureQueriesContext(connection) as statements:
        read = client.get(url)
    assert read.status_code == 200
    assert read.json()["selectedSpaces"] == chosen
    token_read, installation_read = (s["sql"] for s in statements.captured_queries)
    assert 'FROM "docplatform_apitoken"' in token_read
    assert 'FROM "integrations_installation"' in installation_read
    assert '"docplatform_membership"' in installation_read  # the caller's role, with it
    listed = client.get(install_url("organization", acme)).json()
    assert [row for row in listed["results"] if row["id"] == installation_id] == [read.json()]


def test_deliveries_of_an_installation_filtered_by_status(make_tool, org_admin, places):
    make_tool("private")
    client = api_client(org_admin)
    installation_id = client.post(
        install_url("organization", places["acme"]), {"integration": "tool"}
    ).json()["id"]
    deliveries = client.get(f"{API}/installations/{installation_id}/deliveries/").json()
    assert (deliveries["next"], deliveries["previous"]) == (None, None)  # one page, no count
    assert len(deliveries["results"]) == 1
    row = deliveries["results"][0]
    delivery = Delivery.objects.get()
    assert row == {
        "id": delivery.id,
        "eventId": str(delivery.event_uuid),
        "type": "installation_setup",
        "test": False,
        "installation": installation_id,
        "consumer": "runtime",
        "status": "pending",
        "chain": 1,
        "attempts": 0,
        "outcome": "",
        "lastError": "",
        "nextAttemptAt": None,
        "createdAt": row["createdAt"],
        "completedAt": None,
    }
    assert client.get(f"{API}/deliveries/{delivery.id}/").json() == {**row, "attemptLog": []}
    failed = client.get(f"{API}/installations/{installation_id}/deliveries/?status=failed")
    assert failed.json() == {"next": None, "previous": None, "results": []}
    bad = client.get(f"{API}/installations/{installation_id}/deliveries/?status=lost")
    assert error_attrs(bad) == ["status"]
    # A cursor whose id is no delivery's id (they are numbers): a 400 naming it.
    cursor = "bnwyMDI2LTAxLTAxVDAwOjAwOjAwKzAwOjAwfGFi"  # n|2026-01-01T00:00:00+00:00|ab
    bad = client.get(f"{API}/installations/{installation_id}/deliveries/", {"cursor": cursor})
    assert error_attrs(bad) == ["cursor"]


# --- Bad bodies -----------------------------------------------------------------------------

BAD_INSTALL_BODIES = [
    ({}, ["integration"]),
    ({"integration": ["tool"]}, ["integration"]),
    ({"integration": "tool", "configuration": "x"}, ["configuration"]),
    ({"integration": "tool", "configuration": {}}, ["configuration"]),
    ({"integration": "tool", "configuration": {"tracking_id": 5}}, ["configuration.tracking_id"]),
    ({"integration": "tool", "configuration": {"nope": 1}}, ["configuration.nope"]),
    ({"integration": "tool", "installToken": {"a": 1}}, ["installToken"]),
]


@pytest.mark.parametrize(
    ("body", "attrs"),
    [
        *BAD_INSTALL_BODIES,
        ({"integration": "tool", "spaceSelection": "some"}, ["spaceSelection"]),
        ({"integration": "tool", "selectedSpaces": "abc"}, ["selectedSpaces"]),
        ({"integration": "tool", "selectedSpaces": ["nosuchspace"]}, ["selectedSpaces"]),
        ({"integration": "tool", "selectedSpaces": ["{globex_space}"]}, ["selectedSpaces"]),
        ([{"integration": "tool"}], ["non_field_errors"]),
    ],
)
def test_bad_organization_install_bodies(make_tool, org_admin, places, body, attrs):
    make_tool("private")
    if isinstance(body, dict) and body.get("selectedSpaces") == ["{globex_space}"]:
        body = {**body, "selectedSpaces": [places["globex"]["space"].id]}
    before = row_counts()
    response = api_client(org_admin).post(install_url("organization", places["acme"]), body)
    assert response.status_code == 400
    assert error_attrs(response) == attrs
    assert row_counts() == before


@pytest.mark.parametrize("level", ["space", "site"])
@pytest.mark.parametrize(
    ("body", "attrs"),
    [
        *BAD_INSTALL_BODIES[:4],
        ({"integration": "tool", "configuration": {"theme": "neon"}}, ["configuration.theme"]),
    ],
)
def test_bad_space_and_site_install_bodies(make_tool, org_admin, places, level, body, attrs):
    make_tool("private")
    before = row_counts()
    response = api_client(org_admin).post(install_url(level, places["acme"]), body)
    assert response.status_code == 400
    assert error_attrs(response) == attrs
    assert row_counts() == before


def test_installing_twice_is_a_field_error(make_tool, org_admin, places):
    make_tool("private")
    client = api_client(org_admin)
    assert (
        client.post(install_url("space", places["acme"]), {"integration": "tool"}).status_code
        == 201
    )
    before = row_counts()
    again = client.post(install_url("space", places["acme"]), {"integration": "tool"})
    assert error_attrs(again) == ["integration"]
    assert row_counts() == before


@pytest.mark.parametrize(
    ("path", "method", "body", "attrs"),
    [
        ("configuration/", "patch", [], ["configuration"]),
        ("configuration/", "patch", {}, ["configuration"]),
        ("configuration/", "patch", {"region": "mars"}, ["configuration.region"]),
        ("configuration/", "patch", {"region": ["eu"]}, ["configuration.region"]),
        # a button property is written by the OAuth connect flow only
        ("configuration/", "patch", {"slack": {"access_token": SECRET}}, ["configuration.slack"]),
        ("configuration/", "patch", {"slack": None}, ["configuration.slack"]),
        ("configuration/", "patch", {"slack": "connected"}, ["configuration.slack"]),
        ("space-selection/", "put", {}, ["spaceSelection"]),
        ("space-selection/", "put", {"spaceSelection": "some"}, ["spaceSelection"]),
        (
            "space-selection/",
            "put",
            {"spaceSelection": "selected", "selectedSpaces": ["nosuchspace"]},
            ["selectedSpaces"],
        ),
    ],
)
def test_bad_configuration_and_selection_bodies_change_nothing(
    make_tool, org_admin, places, path, method, body, attrs
):
    tool = make_tool("private")
    installation = installation_create(
        user=org_admin, integration=tool, organization=places["acme"]["org"]
    )
    stored = Installation.objects.values().get(pk=installation.pk)
    before = row_counts()
    response = getattr(api_client(org_admin), method)(
        f"{API}/installations/{installation.id}/{path}", body
    )
    assert response.status_code == 400
    assert error_attrs(response) == attrs
    assert Installation.objects.values().get(pk=installation.pk) == stored
    assert row_counts() == before
    assert SECRET not in response.content.decode()


def test_only_an_organization_installation_has_a_space_selection(make_tool, org_admin, places):
    tool = make_tool("private")
    installation = installation_create(
        user=org_admin,
        integration=tool,
        organization=places["acme"]["org"],
        space=places["acme"]["space"],
    )
    response = api_client(org_admin).put(
        f"{API}/installations/{installation.id}/space-selection/", {"spaceSelection": "all"}
    )
    assert error_attrs(response) == ["spaceSelection"]
