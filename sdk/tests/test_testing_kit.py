"""``docplatform_sdk.testing``: an author's tests call the handlers, components and ``fetch``
in process, with a made-up environment, events from the catalogue's examples and
``context.fetch`` answered by the test; the scaffold's own test passes with the SDK alone."""

import os
import subprocess
import sys
from pathlib import Path

import docplatform_sdk
import pytest
from docplatform_sdk import Response, block, button, create_component, create_integration, text
from docplatform_sdk.authoring.scaffold import scaffold_create
from docplatform_sdk.context import FetchError
from docplatform_sdk.events import EXAMPLES, SpaceViewEvent
from docplatform_sdk.testing import (
    PUBLIC_ENDPOINT,
    FakeFetch,
    IntegrationTester,
    UnexpectedFetch,
    make_environment,
    sample_event,
)

HOOK = "https://hooks.example.com/in"
SDK_SOURCE = Path(docplatform_sdk.__file__).resolve().parents[1]


def notify(event, context):
    answer = context.fetch(
        HOOK,
        method="POST",
        headers={"Authorization": context.environment.secrets.TOKEN},
        body=f'{{"space": "{event.spaceId}"}}',
    )
    if not answer.ok:
        raise RuntimeError(f"the hook answered {answer.status}")


def fetch(request, context):
    if request.route == "/installation":
        return Response.json(context.api.installation())
    configuration = context.environment.installation.configuration
    return Response.json({"greeting": configuration.get("greeting"), "got": request.json()})


def render(element, context):
    return block(
        text(f"{element.props['label']}: {element.state['n']}"), button("+", {"action": "add"})
    )


async def action(element, pressed, context):  # plain or async, as in the runtime
    return {"state": {"n": element.state["n"] + pressed.by}}


INTEGRATION = create_integration(
    fetch=fetch,
    components=[
        create_component("counter", render=render, action=action, initial_state=lambda p: {"n": 0})
    ],
    events={"space_content_updated": notify},
)


def test_an_event_built_from_the_catalogues_example_reaches_its_handler():
    fetch = FakeFetch().on("POST", HOOK, Response.json({}))
    tester = IntegrationTester(INTEGRATION, fetch=fetch, secrets={"TOKEN": "t0k"})
    assert tester.send("space_content_updated", spaceId="space-1") is True
    [sent] = fetch.requests
    assert (sent.method, sent.url, sent.headers["authorization"]) == ("POST", HOOK, "t0k")
    assert sent.json() == {"space": "space-1"}
    assert tester.send("space_view") is False  # no handler: not handled, as in the runtime


def test_what_the_test_answers_reaches_the_code():
    failing = FakeFetch().on("POST", HOOK, Response.json({"error": "down"}, status=503))
    with pytest.raises(RuntimeError, match="the hook answered 503"):
        IntegrationTester(INTEGRATION, fetch=failing, secrets={"TOKEN": "t"}).send(
            "space_content_updated"
        )
    unreachable = FakeFetch().on("POST", HOOK, FetchError("timed out"))
    with pytest.raises(FetchError, match="timed out"):
        IntegrationTester(INTEGRATION, fetch=unreachable, secrets={"TOKEN": "t"}).send(
            "space_content_updated"
        )


def test_a_request_the_test_did_not_answer_fails_it_naming_the_request():
    fetch = FakeFetch().on("GET", "https://elsewhere.example.com/", Response())
    tester = IntegrationTester(INTEGRATION, fetch=fetch, secrets={"TOKEN": "t"})
    with pytest.raises(UnexpectedFetch, match=f"no answer for POST {HOOK} \\(answers: GET "):
        tester.send("space_content_updated")
    assert [request.url for request in fetch.requests] == [HOOK]
    with pytest.raises(FetchError, match="only http and https"):
        fetch("ftp://example.com/")


def test_fetch_is_called_with_the_request_and_the_environment():
    tester = IntegrationTester(INTEGRATION, configuration={"greeting": "Hi"})
    response = tester.request("POST", "/?x=1", json={"a": 1})
    assert (response.status, response.json()) == (200, {"greeting": "Hi", "got": {"a": 1}})


def test_context_api_goes_to_the_made_up_platform_through_the_tests_answers():
    environment = make_environment()
    api = environment.apiEndpoint
    fetch = FakeFetch().on(
        "GET",
        f"{api}/installation/",
        lambda request: Response.json(
            {"id": environment.installation.id, "auth": request.headers["Authorization"]}
        ),
    )
    answer = IntegrationTester(INTEGRATION, environment=environment, fetch=fetch).request(
        "GET", "/installation"
    )
    assert answer.json() == {
        "id": EXAMPLES["space_view"]["installationId"],
        "auth": "Bearer installation-token",
    }
    assert environment.installation.urls.publicEndpoint == PUBLIC_ENDPOINT


def test_a_component_renders_and_runs_its_actions():
    tester = IntegrationTester(INTEGRATION)
    first = tester.render("counter", props={"label": "Count"})
    assert first.state == {"n": 0}
    assert first.element["children"][0] == {"type": "text", "text": "Count: 0"}
    pressed = tester.render(
        "counter", props={"label": "Count"}, state=first.state, action={"action": "add", "by": 2}
    )
    assert pressed.state == {"n": 2}
    assert pressed.element["children"][0]["text"] == "Count: 2"
    with pytest.raises(LookupError, match="no component 'countr'"):
        tester.render("countr")


def test_sample_events_are_the_catalogues_examples_typed_and_checked():
    event = sample_event("space_view", spaceId="mine")
    assert type(event) is SpaceViewEvent
    assert event.spaceId == "mine"
    assert event.visitor.anonymousId == EXAMPLES["space_view"]["visitor"]["anonymousId"]
    event.visitor["ip"] = "::1"
    assert sample_event("space_view").visitor.ip != "::1"  # each sample is its own copy
    with pytest.raises(
        ValueError, match="space_view has no field 'space_id': did you mean 'spaceId'"
    ):
        sample_event("space_view", space_id="x")
    with pytest.raises(ValueError, match="did you mean 'space_content_updated'"):
        sample_event("space_content_update")


def test_the_scaffolds_test_passes(tmp_path):
    folder = tmp_path / "hello"
    scaffold_create(folder=folder, organization="acme")
    assert (folder / "test_main.py").exists()
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-W", "error"],
        capture_output=True,
        text=True,
        cwd=folder,
        timeout=120,
        # an author's shell (no platform settings), with the SDK under test
        env={"PATH": os.environ["PATH"], "HOME": str(tmp_path), "PYTHONPATH": str(SDK_SOURCE)},
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "3 passed" in done.stdout and "warning" not in done.stdout
