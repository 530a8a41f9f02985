"""The whole roles' table (``docplatform.access.TABLE``) for every integration and endpoint
action at the marketplace's door: each role of the organization (admin, member, reader) and
an admin of another organization (the outsider) opens each page and sends each form. Whoever
the table names gets the page (200) or is sent on (302); the organization's other people get
403 with the sentence naming who may, and nothing is written; the outsider gets 404. Pages
every member reads show only the buttons their reader may use."""

import html

import pytest

from docplatform import access
from docplatform.access import Action
from integrations.policies import may_install
from tests.integrations.doors import (
    PEOPLE,
    client_of,
    door,
    of_the_delivery,
    page,
    refusal_for,
    the_last_hour,
    written,
)
from webhooks.services.signing_secrets import signing_secret_current

pytestmark = pytest.mark.django_db

A = Action
TOOL, HOOK = "tool_installation", "hook"
ACME = "/marketplace/orgs/acme"
INSTALL_WRITER = f"{ACME}/integrations/writer/install/"


def release(w) -> str:
    return f"{ACME}/integrations/tool/versions/{w.tool.released_version.number}/release/"


def resend_since(w) -> dict:
    return {"resend-since": the_last_hour()["since"]}


def replay_range(w) -> dict:
    return {f"replay-{name}": value for name, value in the_last_hour().items()}


DOORS = [
    door("the catalogue", A.READ, "get", f"{ACME}/"),
    door("the installations", A.READ, "get", f"{ACME}/installations/"),
    door("an installation", A.READ, "get", page(TOOL)),
    door("an integration", A.READ, "get", f"{ACME}/integrations/tool/"),
    door("the consent page", A.INSTALL, "get", f"{INSTALL_WRITER}?level=organization"),
    door(
        "install",
        A.INSTALL,
        "post",
        INSTALL_WRITER,
        {"level": "organization", "confirm": "yes"},
        302,
    ),
    door("configure", A.CONFIGURE, "post", page(TOOL), {"configuration-label": "Docs"}, 302),
    door(
        "choose spaces", A.CONFIGURE, "post", page(TOOL, "spaces/"), {"space_selection": "all"}, 302
    ),
    door("connect OAuth", A.CONFIGURE, "post", page(TOOL, "connect/"), {"property": "slack"}, 302),
    door(
        "disconnect OAuth",
        A.CONFIGURE,
        "post",
        page(TOOL, "disconnect/"),
        {"property": "slack"},
        302,
    ),
    door("pause", A.PAUSE, "post", page(HOOK, "pause/"), success=302),
    door("resume", A.PAUSE, "post", page(HOOK, "resume/"), success=302),
    door(
        "re-enable an endpoint",
        A.PAUSE,
        "post",
        page("site_hook", "webhook/reenable/"),
        success=302,
    ),
    door("the uninstall page", A.UNINSTALL, "get", page(HOOK, "uninstall/")),
    door("uninstall", A.UNINSTALL, "post", page(HOOK, "uninstall/"), success=302),
    door(
        "approve new scopes", A.APPROVE_SCOPES, "post", page(TOOL, "approve-scopes/"), success=302
    ),
    door(
        "send a test event",
        A.SEND_TEST_EVENTS,
        "post",
        page(HOOK, "deliveries-test-event/"),
        {"event_type": "ping"},
        302,
    ),
    door(
        "a test event's sample",
        A.SEND_TEST_EVENTS,
        "get",
        page(HOOK, "deliveries-test-event/sample/"),
        {"type": "ping"},
    ),
    door("the delivery log", A.READ_LOGS, "get", page(HOOK, "deliveries/")),
    door("a delivery's attempts", A.READ_LOGS, "get", of_the_delivery()),
    door("an installation's log", A.READ_LOGS, "get", page(TOOL, "logs/")),
    door("an integration's log", A.READ_LOGS, "get", f"{ACME}/integrations/tool/logs/"),
    door("redeliver", A.REDELIVER, "post", of_the_delivery("redeliver/"), success=302),
    door("resend from the log", A.REDELIVER, "post", of_the_delivery("resend/"), success=302),
    door(
        "resend all failed",
        A.REDELIVER,
        "post",
        page(HOOK, "deliveries-resend-failed/"),
        resend_since,
        302,
    ),
    door("ping", A.PING, "post", page(HOOK, "webhook/ping/"), success=302),
    door("replay", A.REPLAY, "post", page(HOOK, "deliveries-replays/"), replay_range, 302),
    door("the rotation page", A.ROTATE_SECRET, "get", page(HOOK, "webhook/rotate-secret/")),
    door(
        "rotate the signing secret",
        A.ROTATE_SECRET,
        "post",
        page(HOOK, "webhook/rotate-secret/"),
        success=302,
    ),
    door("release a version", A.PUBLISH, "post", release, success=302),
]


@pytest.mark.slow
@pytest.mark.parametrize("person", PEOPLE)
@pytest.mark.parametrize("form", DOORS, ids=str)
def test_each_page_and_form_lets_in_whom_the_table_names(world, form, person):
    before = written()
    response = form.call(client_of(world.people[person], page=True), world)

    if person == "outsider":
        assert response.status_code == 404
        assert written() == before
        return
    refusal = refusal_for(form, person, world.organization)
    if refusal is None:
        assert response.status_code == form.success, response.content[:2000]
    else:
        assert response.status_code == 403
        assert html.escape(refusal) in response.content.decode()
        assert written() == before


# --- Pages show only the buttons their reader may use ----------------------------------------

#: action -> what the installation pages show for it (a form's or a link's address, a label).
BUTTONS = {
    A.CONFIGURE: ["Save configuration", "/connect/", "/disconnect/", "Save spaces"],
    A.PAUSE: ["/pause/"],
    A.UNINSTALL: ["/uninstall/"],
    A.APPROVE_SCOPES: ["/approve-scopes/"],
    A.READ_LOGS: ["/deliveries/", "logs-link"],
    A.PING: ["/webhook/ping/"],
    A.ROTATE_SECRET: ["/webhook/rotate-secret/"],
}


@pytest.mark.parametrize("role", access.ROLES)
def test_an_installation_page_shows_only_the_buttons_its_reader_may_use(world, role):
    client = client_of(world.people[role], page=True)
    shown = "\n".join(client.get(page(name)(world)).content.decode() for name in (TOOL, HOOK))
    for action, markers in BUTTONS.items():
        for marker in markers:
            assert (marker in shown) is (role in access.TABLE[action]), (action, marker)
    secret = signing_secret_current(world.hook)
    assert (secret in shown) is (role in access.TABLE[A.ROTATE_SECRET])
    refused = html.escape(access.refusal(A.CONFIGURE))
    assert (refused in shown) is (role not in access.TABLE[A.CONFIGURE])


@pytest.mark.parametrize("role", access.ROLES)
def test_an_integration_page_offers_installing_to_whoever_may(world, role):
    person = world.people[role]
    content = client_of(person, page=True).get(f"{ACME}/integrations/writer/").content.decode()
    allowed = may_install(person, world.writer, world.organization)
    assert ("/integrations/writer/install/" in content) is allowed
    assert ("install-refusal" in content) is not allowed


@pytest.mark.parametrize("role", access.ROLES)
def test_the_delivery_log_shows_only_the_forms_its_reader_may_send(world, role, monkeypatch):
    """The log is its admins' (``READ_LOGS``); widened to everyone, each of its forms still
    follows its own row."""
    monkeypatch.setitem(access.TABLE, A.READ_LOGS, frozenset(access.ROLES))
    client = client_of(world.people[role], page=True)
    log = client.get(page(HOOK, "deliveries/")(world)).content.decode()
    detail = client.get(of_the_delivery()(world)).content.decode()
    forms = {
        A.SEND_TEST_EVENTS: "deliveries-test-event/",
        A.REDELIVER: "deliveries-resend-failed/",
        A.REPLAY: "deliveries-replays/",
    }
    for action, marker in forms.items():
        assert (marker in log) is (role in access.TABLE[action]), action
    assert ("/resend/" in detail) is (role in access.TABLE[A.REDELIVER])
