"""The whole roles' table (``docplatform.access.TABLE``) for every integration and endpoint
action at the REST API's door: each role of the organization (admin, member, reader) and an
admin of another organization (the outsider) calls each endpoint. Whoever the table names
gets the endpoint's success; the organization's other people get 403 with the sentence naming
who may, and nothing is written; the outsider gets 404, as if nothing were there. The
expectations are read from the table: changing a row changes them. (The marketplace's pages:
``test_role_doors_pages``; the command line: ``test_role_doors_cli``.)"""

import pytest

from docplatform.access import Action
from tests.api_helpers import API
from tests.integrations.doors import (
    PEOPLE,
    api,
    client_of,
    door,
    refusal_for,
    the_last_hour,
    written,
)

pytestmark = pytest.mark.django_db

A = Action
TOOL, HOOK = "tool_installation", "hook"


def space_installations(w) -> str:
    return f"{API}/spaces/{w.space.pk}/installations/"


def delivery(w) -> str:
    return f"{API}/deliveries/{w.delivery.pk}/"


def redeliver(w) -> str:
    return f"{delivery(w)}redeliver/"


def release(w) -> str:
    return f"{API}/integrations/tool/versions/{w.tool.released_version.number}/release/"


def the_hour(w) -> dict:
    return the_last_hour()


WRITER = {"integration": "writer"}

DOORS = [
    door("list installations", A.READ, "get", f"{API}/orgs/acme/installations/"),
    door("read an installation", A.READ, "get", api(TOOL)),
    door("list test event types", A.READ, "get", api(HOOK, "test-events/")),
    door("install", A.INSTALL, "post", f"{API}/orgs/acme/installations/", WRITER, 201),
    door("install into a space", A.INSTALL, "post", space_installations, WRITER, 201),
    door(
        "change the webhook URL",
        A.CONFIGURE,
        "patch",
        api(HOOK, "configuration/"),
        {"url": "https://attacker.example/hook"},
    ),
    door(
        "choose spaces",
        A.CONFIGURE,
        "put",
        api(TOOL, "space-selection/"),
        {"spaceSelection": "all"},
    ),
    door(
        "connect OAuth",
        A.CONFIGURE,
        "post",
        api(TOOL, "oauth/connect/"),
        {"property": "slack"},
        201,
    ),
    door(
        "disconnect OAuth",
        A.CONFIGURE,
        "post",
        api(TOOL, "oauth/disconnect/"),
        {"property": "slack"},
    ),
    door(
        "run development versions",
        (A.CONFIGURE, A.PUBLISH),
        "post",
        api(TOOL, "development/"),
        {"development": True},
    ),
    door("pause", A.PAUSE, "post", api(HOOK, "pause/")),
    door("resume", A.PAUSE, "post", api(HOOK, "resume/")),
    door("re-enable an endpoint", A.PAUSE, "post", api("site_hook", "webhook/endpoint/reenable/")),
    door("uninstall", A.UNINSTALL, "delete", api(HOOK), success=204),
    door("approve new scopes", A.APPROVE_SCOPES, "post", api(TOOL, "approve-scopes/"), {}),
    door(
        "send a test event",
        A.SEND_TEST_EVENTS,
        "post",
        api(HOOK, "test-events/"),
        {"type": "space_content_updated"},
        201,
    ),
    door("list deliveries", A.READ_LOGS, "get", api(HOOK, "deliveries/")),
    door("read a delivery's attempts", A.READ_LOGS, "get", delivery),
    door("read an installation's log", A.READ_LOGS, "get", api(TOOL, "logs/")),
    door("read an integration's log", A.READ_LOGS, "get", f"{API}/integrations/tool/logs/"),
    door("read an endpoint's state", A.READ_LOGS, "get", api(HOOK, "webhook/endpoint/")),
    door("list replays", A.READ_LOGS, "get", api(HOOK, "webhook/replays/")),
    door("redeliver", A.REDELIVER, "post", redeliver, success=202),
    door("ping", A.PING, "post", api(HOOK, "webhook/ping/"), success=202),
    door("replay", A.REPLAY, "post", api(HOOK, "webhook/replays/"), the_hour, 202),
    door("read the signing secret", A.ROTATE_SECRET, "get", api(HOOK, "webhook/secret/")),
    door("rotate the signing secret", A.ROTATE_SECRET, "post", api(HOOK, "webhook/secret/rotate/")),
    door("read the install link", A.PUBLISH, "get", f"{API}/integrations/tool/install-link/"),
    door(
        "rotate the install link",
        A.PUBLISH,
        "post",
        f"{API}/integrations/tool/install-link/rotate/",
    ),
    door("release a version", A.PUBLISH, "post", release),
]


@pytest.mark.parametrize("person", PEOPLE)
@pytest.mark.parametrize("endpoint", DOORS, ids=str)
def test_each_endpoint_lets_in_whom_the_table_names(world, endpoint, person):
    before = written()
    response = endpoint.call(client_of(world.people[person], page=False), world)

    if person == "outsider":
        assert response.status_code == 404, response.content
        assert written() == before
        return
    refusal = refusal_for(endpoint, person, world.organization)
    if refusal is None:
        assert response.status_code == endpoint.success, response.content
    else:
        assert response.status_code == 403, response.content
        assert response.json()["errors"][0]["detail"] == refusal
        assert written() == before
