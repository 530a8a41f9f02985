"""Components through the REST API, rendered by a real runtime host: the example counter's
state per instance, its configuration screen, failures, and who may call."""

import io
import textwrap
import threading
import time
from pathlib import Path

import pytest
import requests
from django.core.management import call_command
from django.db import connection
from django.test.utils import CaptureQueriesContext

from docplatform.services import api_token_create
from integrations.models import ComponentState
from integrations.services import integration_publish_folder
from integrations.services.installations import installation_configure, installation_create
from tests.api_helpers import API, NOT_FOUND, api_client
from tests.factories import MembershipFactory, OrganizationFactory, SpaceFactory
from tests.integrations.conftest import listing_approve, minimal_manifest

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "quick-insert-counter"

pytestmark = pytest.mark.slow


@pytest.fixture
def counter(runtime, org_admin):
    """The example integration, published as its author would."""
    return integration_publish_folder(path=EXAMPLE, publisher=org_admin).version.integration


@pytest.fixture
def space_installation(counter, org_admin, organization):
    space = SpaceFactory(organization=organization)
    return installation_create(
        user=org_admin, integration=counter, organization=organization, space=space
    )


def render(client, installation, component_id, **body):
    url = f"{API}/installations/{installation.pk}/components/{component_id}/render/"
    return client.post(url, body)


def counted(response) -> str:
    """The counter block's text: ``Count: 2``."""
    assert response.status_code == 200, response.json()
    return response.json()["element"]["children"][0]["text"]


def stored_state(installation, instance, component_id="counter") -> dict:
    return ComponentState.objects.get(
        installation=installation, component_id=component_id, instance=instance
    ).state


def test_each_block_instance_keeps_its_own_state(space_installation, org_admin):
    client = api_client(org_admin)
    first = render(client, space_installation, "counter", instance="first")
    assert first.json() == {
        "instance": "first",
        "element": {
            "type": "block",
            "children": [
                {"type": "text", "text": "Count: 0"},
                {"type": "button", "label": "Increment", "onPress": {"action": "increment"}},
                {"type": "button", "label": "Reset", "onPress": {"action": "reset"}},
            ],
        },
        "state": {"count": 0},
    }
    increment = {"action": "increment"}
    render(client, space_installation, "counter", instance="first", action=increment)
    second_press = render(client, space_installation, "counter", instance="first", action=increment)
    assert counted(second_press) == "Count: 2"
    assert stored_state(space_installation, "first") == {"count": 2}

    # Another instance starts from its own props; the first keeps its count.
    other = render(client, space_installation, "counter", instance="other", props={"start": 10})
    assert counted(other) == "Count: 10"
    assert counted(render(client, space_installation, "counter", instance="first")) == "Count: 2"

    # An action the component does not handle changes nothing, not even the stored row.
    revision = ComponentState.objects.get(instance="first").revision
    unhandled = render(
        client, space_installation, "counter", instance="first", action={"action": "dance"}
    )
    assert counted(unhandled) == "Count: 2"
    assert ComponentState.objects.get(instance="first").revision == revision

    # Reset goes back to the initial state of the instance's stored props.
    reset = render(
        client, space_installation, "counter", instance="other", action={"action": "reset"}
    )
    assert counted(reset) == "Count: 10"
    pressed = render(client, space_installation, "counter", instance="other", action=increment)
    assert counted(pressed) == "Count: 11"
    assert stored_state(space_installation, "first") == {"count": 2}


def test_a_failing_component_gives_a_clear_error_and_keeps_its_state(space_installation, org_admin):
    client = api_client(org_admin)
    increment = {"action": "increment"}
    render(client, space_installation, "counter", instance="first", action=increment)
    # A step that is not a number: the integration's code raises on the next increment.
    installation_configure(
        user=org_admin, installation=space_installation, changes={"step": "lots"}
    )
    failed = render(client, space_installation, "counter", instance="first", action=increment)
    assert failed.status_code == 502
    assert failed.json() == {
        "type": "server_error",
        "errors": [
            {
                "code": "integration_error",
                "detail": "the integration raised an error",
                "attr": None,
            }
        ],
    }
    assert stored_state(space_installation, "first") == {"count": 1}


def test_the_configuration_screen_saves_through_the_platform_api(space_installation, org_admin):
    client = api_client(org_admin)
    screen = render(client, space_installation, "counter-settings")
    assert screen.status_code == 200, screen.json()
    assert screen.json()["instance"] == "configuration"
    step = screen.json()["element"]["children"][2]
    assert (step["type"], step["value"], step["onChange"]) == ("select", "1", {"action": "edit"})

    edit = {"action": "edit", "name": "step", "value": "5"}
    render(client, space_installation, "counter-settings", action=edit)
    saved = render(client, space_installation, "counter-settings", action={"action": "save"})
    assert saved.json()["element"]["children"][-1] == {"type": "text", "text": "Saved."}
    space_installation.refresh_from_db()
    assert space_installation.configuration == {"label": "Count", "step": 5, "show_reset": True}

    pressed = render(
        client, space_installation, "counter", instance="b1", action={"action": "increment"}
    )
    assert counted(pressed) == "Count: 5"


def test_who_may_render(space_installation, org_admin, organization, counter):
    component = "counter"
    body = {"instance": "first"}
    own_token = space_installation.api_token
    assert (
        render(api_client(token=own_token), space_installation, component, **body).status_code
        == 200
    )

    # Members of another organization, their personal tokens, and other installations' tokens.
    globex = OrganizationFactory(subdomain="globex")
    stranger = MembershipFactory(organization=globex, role="admin").user
    _, personal = api_token_create(user=stranger, name="cli")
    other_installation = installation_create(
        user=stranger,
        integration=listing_approve(counter),
        organization=globex,
        space=SpaceFactory(organization=globex),
    )
    for client in (
        api_client(stranger),
        api_client(token=personal),
        api_client(token=other_installation.api_token),
        api_client(token=space_installation.parent.api_token),
    ):
        response = render(client, space_installation, component, **body)
        assert (response.status_code, response.json()) == (404, NOT_FOUND)
    assert render(api_client(), space_installation, component, **body).status_code in (401, 403)
    assert not ComponentState.objects.exclude(installation=space_installation).exists()


def test_what_is_refused(space_installation, org_admin):
    client = api_client(org_admin)
    unknown = render(client, space_installation, "no-such-component", instance="x")
    assert unknown.status_code == 404
    assert "no component 'no-such-component'" in unknown.json()["errors"][0]["detail"]
    for odd in ("a%00b", "x" * 300):  # a NUL, a name longer than any stored: not found
        assert render(client, space_installation, odd, instance="x").status_code == 404, odd
    no_instance = render(client, space_installation, "counter")
    assert no_instance.status_code == 400
    assert no_instance.json()["errors"][0]["attr"] == "instance"
    for bad in (
        {"instance": "a b"},
        {"instance": "x", "action": {"name": "increment"}},
        {"instance": "x", "action": "increment"},
        {"instance": "x", "props": [1]},
    ):
        assert render(client, space_installation, "counter", **bad).status_code == 400, bad
    assert not ComponentState.objects.exists()

    from integrations.services.installations import installation_pause

    installation_pause(user=org_admin, installation=space_installation.parent)
    paused = render(client, space_installation, "counter", instance="x")
    assert paused.status_code == 503  # the gateway's one status for a paused installation
    assert paused.json()["errors"][0]["code"] == "installation_paused"


HOSTILE = textwrap.dedent(
    """
    import os
    import time

    from docplatform_sdk import block, create_component, create_integration, link, text

    def loops(element, context):
        while True:
            pass

    def crashes(element, context):
        os._exit(3)

    def unknown_markup(element, context):
        return block(text("hi"), {"type": "marquee", "text": "<blink>"})

    def script_link(element, context):
        return link("Click", "javascript:alert(1)")

    def no_state(props):
        return None

    def slowly_bumped(element, action, context):
        time.sleep(1)
        return {"state": {"bumps": element.state["bumps"] + 1}}

    def bumps(element, context):
        return text(f"bumps: {element.state['bumps']}")

    integration = create_integration(
        components=[
            create_component("loops", render=loops),
            create_component("crashes", render=crashes),
            create_component("unknown-markup", render=unknown_markup),
            create_component("script-link", render=script_link),
            create_component("no-state", initial_state=no_state, render=unknown_markup),
            create_component(
                "slow", initial_state=lambda props: {"bumps": 0}, action=slowly_bumped, render=bumps
            ),
        ]
    )
    """
)


@pytest.fixture
def hostile(runtime, org_admin, organization, write_integration):
    ids = ["loops", "crashes", "unknown-markup", "script-link", "no-state", "slow"]
    root = write_integration(
        minimal_manifest(
            name="hostile",
            script="main.py",
            blocks=[{"id": i, "title": i, "description": i} for i in ids],
        ),
        files={"main.py": HOSTILE},
        folder="hostile",
    )
    integration = integration_publish_folder(path=root, publisher=org_admin).version.integration
    # A block the code lacks: publish refuses one now, a version published before had one.
    missing = {"id": "not-in-script", "title": "Missing", "description": "Not in the code."}
    integration.blocks = [*integration.blocks, missing]
    integration.save(update_fields=["blocks"])
    return installation_create(user=org_admin, integration=integration, organization=organization)


def test_components_that_misbehave_are_contained(hostile, org_admin):
    installation = hostile
    client = api_client(org_admin)
    expected = {
        "loops": (504, "timeout", "the integration did not answer in time"),
        "crashes": (502, "worker_crashed", "the integration's worker crashed"),
        "unknown-markup": (
            502,
            "invalid_answer",
            "the component's element is not markup: element.children[1] has the unknown type "
            "'marquee' (known: block, text, button, link, text_input, select, switch)",
        ),
        "script-link": (
            502,
            "invalid_answer",
            "the component's element is not markup: element.url must be an http or https URL",
        ),
        "no-state": (502, "invalid_answer", "the component's state must be an object"),
    }
    for component_id, (status, code, detail) in expected.items():
        response = render(client, installation, component_id, instance="x")
        assert response.status_code == status, component_id
        assert response.json()["errors"][0] | {"attr": None} == {
            "code": code,
            "detail": detail,
            "attr": None,
        }
    missing = render(client, installation, "not-in-script", instance="x")
    assert missing.status_code == 404
    assert "code has no component" in missing.json()["errors"][0]["detail"]
    assert not ComponentState.objects.exists()


def test_two_actions_racing_on_one_instance_never_overwrite_each_other(
    hostile, org_admin, live_server
):
    _, token = api_token_create(user=org_admin, name="race")
    url = f"{live_server.url}{API}/installations/{hostile.pk}/components/slow/render/"
    headers = {"Authorization": f"Bearer {token}"}
    requests.post(url, json={"instance": "x"}, headers=headers, timeout=20)
    bump = {"instance": "x", "action": {"action": "bump"}}
    answers = {}

    def press(name):
        answers[name] = requests.post(url, json=bump, headers=headers, timeout=20)

    first = threading.Thread(target=press, args=["first"])
    first.start()
    time.sleep(0.3)  # the second reads the stored state while the first is still running
    press("second")
    first.join()
    assert answers["first"].json()["state"] == {"bumps": 1}
    assert answers["second"].status_code == 409
    assert answers["second"].json()["errors"][0]["code"] == "conflict"
    assert ComponentState.objects.get(instance="x").state == {"bumps": 1}


def test_the_example_passes_the_check():
    output = io.StringIO()
    call_command("integration", "check", str(EXAMPLE), stdout=output)
    assert output.getvalue() == "quick-insert-counter: the manifest is valid\n"


def test_one_render_path_answers_an_unchanged_instance_from_the_cache(
    space_installation, org_admin
):
    """A single render follows the page's caching: a render without an action whose code,
    configuration, props and state were rendered before calls no runtime; an action always
    does, and what follows shows its new state."""
    from integrations.models import IntegrationLog

    client = api_client(org_admin)
    calls = IntegrationLog.objects.filter(kind="ui_render")
    assert counted(render(client, space_installation, "counter", instance="kept")) == "Count: 0"
    assert calls.count() == 1
    assert counted(render(client, space_installation, "counter", instance="kept")) == "Count: 0"
    assert calls.count() == 1  # from the cache
    increment = {"action": "increment"}
    pressed = render(client, space_installation, "counter", instance="kept", action=increment)
    assert counted(pressed) == "Count: 1"
    assert calls.count() == 2
    with CaptureQueriesContext(connection) as statements:
        kept = render(client, space_installation, "counter", instance="kept")
    assert counted(kept) == "Count: 1"
    assert calls.count() == 2  # the action's render was kept for its new state
    # The stored instance is read with the installation, in one statement.
    reads = [s["sql"] for s in statements.captured_queries if "componentstate" in s["sql"]]
    assert len(reads) == 1
    assert "integrations_installation" in reads[0]
    other = render(client, space_installation, "counter", instance="kept", props={"start": 5})
    assert counted(other) == "Count: 1"  # new props: rendered again (the state is kept)
    assert calls.count() == 3
