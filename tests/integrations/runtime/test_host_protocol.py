"""The envelope protocol of the runtime host, through a real host process."""

import json
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor

import pytest
import requests
from docplatform_sdk import signing
from docplatform_sdk.codebundle import digest

from .support import (
    PROJECT_ROOT,
    EnvelopeClient,
    bundle_of,
    envelope_parts,
    environment_for,
    free_port,
    wait_for_health,
)

ECHO = """
from docplatform_sdk import Response, create_integration

def fetch(request, context):
    return Response(
        201,
        {
            "X-Method": request.method,
            "X-Route": request.route,
            "X-Query": request.query.get("q", ""),
            "X-Signature-Seen": request.headers.get("x-provider-signature", ""),
            "Content-Type": "application/octet-stream",
        },
        request.body,
    )

integration = create_integration(fetch=fetch)
"""

ASYNC_APP = """
import asyncio
from docplatform_sdk import Response, create_integration

async def fetch(request, context):
    await asyncio.sleep(0)
    environment = context.environment
    return Response.json({
        "payload": request.json(),
        "secret": environment.secrets.API_KEY,
        "installation": environment.installation.id,
        "publicEndpoint": environment.integration.urls.publicEndpoint,
        "spaceInstallation": environment.spaceInstallation,
    })

async def on_content_updated(event, context):
    await asyncio.sleep(0)
    if event.spaceId != "space-1" or event.revisionId != "rev-9":
        raise ValueError("the handler did not get the event's fields")

def on_space_view(event, context):
    raise RuntimeError("space_view handler failed on purpose")

integration = create_integration(
    fetch=fetch,
    events={"space_content_updated": on_content_updated, "space_view": on_space_view},
)
"""

COUNTER = """
from docplatform_sdk import block, button, create_component, create_integration, text

def initial_state(props):
    return {"count": props.get("start", 0)}

async def action(element, action, context):
    if action.action == "increment":
        return {"state": {"count": element.state["count"] + 1}}
    return {}

async def render(element, context):
    return block(
        text(f"Count: {element.state['count']}"),
        button("+1", on_press={"action": "increment"}),
    )

counter = create_component(
    "counter", initial_state=initial_state, action=action, render=render
)
integration = create_integration(components=[counter])
"""

FETCH_EVENT = {
    "type": "fetch",
    "eventId": "evt-1",
    "request": {
        "method": "POST",
        "url": "http://platform.invalid/installations/inst-1/echo/hooks/in?q=1",
        "headers": {
            "X-Provider-Signature": "sha256=abc",
            "Content-Type": "application/octet-stream",
        },
    },
}


def counter_markup(count):
    return {
        "type": "block",
        "children": [
            {"type": "text", "text": f"Count: {count}"},
            {"type": "button", "label": "+1", "onPress": {"action": "increment"}},
        ],
    }


def render_event(**fields):
    return {"type": "ui_render", "eventId": "evt-ui", "componentId": "counter", **fields}


def test_health(runtime_host):
    answer = requests.get(f"{runtime_host.url}/health", timeout=5)
    assert answer.status_code == 200
    health = answer.json()
    workers = health.pop("workers")  # the spares start in the background: 0 to 2 so far
    assert workers["pools"] == [] and 0 <= workers["spares"] <= 2
    assert health == {
        "status": "ok",
        "sandbox": "bwrap",
        "pools": 0,
        "seccomp": True,
        "limits": "rlimits (memory, CPU time, processes, open files, file size)",
    }


def test_fetch_round_trip_keeps_the_raw_body_byte_for_byte(client):
    body = bytes(range(256)) * 3 + b"\xff\xfe\x00 not UTF-8 \xc3\x28"
    answer = client.call("echo", ECHO, FETCH_EVENT, fetch_body=body)
    assert answer.status_code == 201
    assert answer.content == body
    assert answer.headers["X-Method"] == "POST"
    assert answer.headers["X-Route"] == "/hooks/in"
    assert answer.headers["X-Query"] == "1"
    assert answer.headers["X-Signature-Seen"] == "sha256=abc"
    assert answer.headers["Content-Type"] == "application/octet-stream"
    assert answer.headers["X-Runtime-Outcome"] == "ok"


def test_fetch_without_a_body_gets_an_empty_one(client):
    answer = client.call("echo", ECHO, FETCH_EVENT)
    assert answer.status_code == 201
    assert answer.content == b""


def test_async_fetch_reads_request_and_environment(client):
    answer = client.call("async-app", ASYNC_APP, FETCH_EVENT, fetch_body=b'{"hello": "world"}')
    assert answer.status_code == 200, answer.text
    assert answer.json() == {
        "payload": {"hello": "world"},
        "secret": "secret-of-async-app",
        "installation": "inst-1",
        "publicEndpoint": f"{client.host.url}/integrations/async-app",
        "spaceInstallation": None,
    }


def test_the_event_and_environment_reach_the_code_as_the_platform_wrote_them(client):
    """The host passes the parts it checked to the worker as they came, whitespace and
    escapes included: what the code reads is what was signed."""
    environment = environment_for("async-app", ASYNC_APP, client.host.url)
    environment["installation"]["id"] = "inst-\u00e9\u2603"
    event = json.dumps(FETCH_EVENT, indent=4).encode()
    written = b"\n  " + json.dumps(environment, indent="\t", ensure_ascii=True).encode() + b" \n"
    parts = envelope_parts(event, written, b'{"hello": "w\\u00f6rld"}')
    answer = client.post("async-app", parts)
    if answer.status_code == 409:  # its code, once
        answer = client.post("async-app", parts | envelope_parts(bundle=bundle_of(ASYNC_APP)))
    assert answer.status_code == 200, answer.text
    assert answer.json()["payload"] == {"hello": "w\u00f6rld"}
    assert answer.json()["installation"] == "inst-\u00e9\u2603"


def test_an_event_with_a_handler_is_handled(client):
    event = {
        "type": "space_content_updated",
        "eventId": "e",
        "installationId": "inst-1",
        "spaceId": "space-1",
        "revisionId": "rev-9",
    }
    answer = client.call("async-app", ASYNC_APP, event)
    assert answer.status_code == 200
    assert answer.json() == {"handled": True}


def test_an_event_without_a_handler_is_answered_as_unhandled(client):
    event = {"type": "space_gitsync_started", "eventId": "e", "spaceId": "space-1"}
    answer = client.call("async-app", ASYNC_APP, event)
    assert answer.status_code == 200
    assert answer.json() == {"handled": False}


def test_a_failing_event_handler_is_an_integration_error(client):
    answer = client.call("async-app", ASYNC_APP, {"type": "space_view", "eventId": "e"})
    assert answer.status_code == 500
    assert answer.json() == {
        "error": "integration_error",
        "message": "RuntimeError: space_view handler failed on purpose",
    }
    assert answer.headers["X-Runtime-Outcome"] == "integration_error"


def test_a_component_without_state_starts_from_its_initial_state(client):
    answer = client.call("counter", COUNTER, render_event(props={"start": 5}))
    assert answer.status_code == 200
    assert answer.json() == {
        "element": counter_markup(5),
        "state": {"count": 5},
        "props": {"start": 5},
    }


def test_an_action_returning_state_replaces_it_and_renders_again(client):
    event = render_event(props={"start": 5}, state={"count": 7}, action={"action": "increment"})
    answer = client.call("counter", COUNTER, event)
    assert answer.json() == {
        "element": counter_markup(8),
        "state": {"count": 8},
        "props": {"start": 5},
    }


def test_an_unhandled_action_renders_the_unchanged_state(client):
    event = render_event(props={}, state={"count": 3}, action={"action": "unknown"})
    answer = client.call("counter", COUNTER, event)
    assert answer.json() == {"element": counter_markup(3), "state": {"count": 3}, "props": {}}


def test_an_action_without_state_applies_to_the_initial_state(client):
    event = render_event(props={"start": 1}, action={"action": "increment"})
    assert client.call("counter", COUNTER, event).json()["state"] == {"count": 2}


def test_an_unknown_component_is_404(client):
    answer = client.call("counter", COUNTER, render_event(componentId="nope"))
    assert answer.status_code == 404
    assert answer.json() == {"error": "unknown_component", "componentId": "nope"}


def test_the_bundle_is_required_once_per_bundle_hash(client):
    script = ECHO + "\n# version A\n"
    environment = environment_for("cached", script, client.host.url)
    without_bundle = envelope_parts(FETCH_EVENT, environment, b"x")

    first = client.post("cached", without_bundle)
    assert first.status_code == 409
    assert first.json() == {"error": "bundle_required", "bundleHash": digest(bundle_of(script))}

    with_bundle = client.post(
        "cached", envelope_parts(FETCH_EVENT, environment, b"x", bundle_of(script))
    )
    assert with_bundle.status_code == 201
    assert client.post("cached", without_bundle).status_code == 201

    new_version = ECHO + "\n# version B\n"
    other_environment = environment_for("cached", new_version, client.host.url)
    assert client.post("cached", envelope_parts(FETCH_EVENT, other_environment)).status_code == 409


def test_a_bundle_that_is_not_the_signed_one_is_refused_and_replaces_nothing(client):
    genuine = (
        "from docplatform_sdk import Response, create_integration\n"
        "integration = create_integration(fetch=lambda request, context: Response.text('mine'))\n"
    )
    hostile = genuine.replace("'mine'", "'hijacked'")
    environment = environment_for("victim", genuine, client.host.url)
    assert client.call("victim", genuine, FETCH_EVENT, environment).text == "mine"

    # The genuine bundle's signed hash, with another bundle: refused, whatever is pooled.
    forged = client.post(
        "victim", envelope_parts(FETCH_EVENT, environment, None, bundle_of(hostile))
    )
    assert forged.status_code == 400
    assert forged.json()["error"] == "bundle_mismatch"
    assert forged.json()["computed"] == digest(bundle_of(hostile))
    assert client.post("victim", envelope_parts(FETCH_EVENT, environment)).text == "mine"


def test_a_malformed_bundle_with_its_own_hash_is_400_naming_the_part(client):
    bundle = b'{"script": "../evil.py", "files": {"../evil.py": "x"}}'
    environment = environment_for("echo", ECHO, client.host.url)
    environment["integration"]["bundleHash"] = digest(bundle)
    answer = client.post("echo", envelope_parts(FETCH_EVENT, environment, None, bundle))
    assert answer.status_code == 400
    assert answer.json()["error"] == "malformed_envelope"
    assert answer.json()["part"] == "bundle"
    assert "inside the folder" in answer.json()["message"]


def test_each_bundle_hash_runs_its_own_code(client):
    script_a = (
        "from docplatform_sdk import Response, create_integration\n"
        "integration = create_integration(fetch=lambda request, context: Response.text('A'))\n"
    )
    script_b = script_a.replace("'A'", "'B'")
    assert client.call("versions", script_a, FETCH_EVENT).text == "A"
    assert client.call("versions", script_b, FETCH_EVENT).text == "B"
    assert client.call("versions", script_a, FETCH_EVENT).text == "A"


@pytest.mark.parametrize(
    ("script", "message"),
    [
        ("def broken(:\n", "SyntaxError: "),
        ("x = 1\n", "ScriptError: main.py must bind integration = create_integration(...)"),
        ("raise ImportError('no such thing')\n", "ImportError: no such thing"),
    ],
)
def test_a_script_that_does_not_load_is_an_integration_error(client, script, message):
    answer = client.call("unloadable", script, FETCH_EVENT)
    assert answer.status_code == 500
    assert answer.json()["error"] == "integration_error"
    assert answer.json()["message"].startswith(message)
    assert "Traceback" not in answer.text


def signed_envelope(client):
    environment = environment_for("echo", ECHO, client.host.url)
    return requests.Request(
        "POST",
        f"{client.host.url}/integrations/echo/v1",
        files=envelope_parts(FETCH_EVENT, environment, b"body", bundle_of(ECHO)),
    ).prepare()


@pytest.mark.parametrize(
    ("signature", "reason"),
    [
        (None, "missing"),
        ("garbage", "malformed"),
        ("t=123", "malformed"),
        ("forged-key", "mismatch"),
        ("stale", "stale"),
        ("other-body", "mismatch"),
    ],
)
def test_envelopes_not_signed_by_the_platform_are_refused(client, signature, reason):
    prepared = signed_envelope(client)
    key = client.host.signing_key
    headers = {
        "garbage": "garbage",
        "t=123": "t=123",
        "forged-key": signing.sign(prepared.body, "not-the-key"),
        "stale": signing.sign(prepared.body, key, timestamp=time.time() - 400),
        "other-body": signing.sign(prepared.body + b"tampered", key),
    }
    if signature is not None:
        prepared.headers[signing.HEADER] = headers[signature]
    answer = client.session.send(prepared, timeout=10)
    assert answer.status_code == 401
    assert answer.json()["error"] == "invalid_signature"
    assert answer.json()["reason"] == reason


def test_an_unsupported_version_lists_the_supported_ones(client):
    answer = client.post("echo", envelope_parts(FETCH_EVENT, {}), version="v2")
    assert answer.status_code == 404
    assert answer.json() == {"error": "unsupported_version", "supported": ["v1"]}


def test_other_paths_and_methods(runtime_host):
    assert requests.get(f"{runtime_host.url}/elsewhere", timeout=5).status_code == 404
    not_a_name = f"{runtime_host.url}/integrations/a%0Aforged%20log%20line/v1"
    assert requests.post(not_a_name, timeout=5).json() == {"error": "not_found"}
    answer = requests.get(f"{runtime_host.url}/integrations/echo/v1", timeout=5)
    assert answer.status_code == 405
    assert answer.headers["Allow"] == "POST"


GOOD_ENVIRONMENT = environment_for("echo", ECHO)


@pytest.mark.parametrize(
    ("parts", "part"),
    [
        (envelope_parts(environment=GOOD_ENVIRONMENT), "event"),
        (envelope_parts(event=FETCH_EVENT), "environment"),
        (envelope_parts(b"{not json", GOOD_ENVIRONMENT), "event"),
        (envelope_parts(FETCH_EVENT, b"\xff\xfe"), "environment"),
        # JSON, but not UTF-8: the worker's frame carries a part as it came, in UTF-8
        (envelope_parts(json.dumps(FETCH_EVENT).encode("utf-16"), GOOD_ENVIRONMENT), "event"),
        (
            envelope_parts(FETCH_EVENT, b"\xef\xbb\xbf" + json.dumps(GOOD_ENVIRONMENT).encode()),
            "environment",
        ),
        (envelope_parts([FETCH_EVENT], GOOD_ENVIRONMENT), "event"),
        (envelope_parts({"eventId": "no type"}, GOOD_ENVIRONMENT), "event"),
        (envelope_parts({"type": "fetch"}, GOOD_ENVIRONMENT), "event"),
        (envelope_parts({**FETCH_EVENT, "request": {"method": "GET"}}, GOOD_ENVIRONMENT), "event"),
        (envelope_parts({"type": "ui_render", "componentId": 3}, GOOD_ENVIRONMENT), "event"),
        (envelope_parts(FETCH_EVENT, {"apiEndpoint": "x"}), "environment"),
        (envelope_parts(FETCH_EVENT, environment_for("someone-else", ECHO)), "environment"),
        (
            envelope_parts(FETCH_EVENT, {**GOOD_ENVIRONMENT, "integration": {"name": "echo"}}),
            "environment",
        ),
        (envelope_parts(FETCH_EVENT, {**GOOD_ENVIRONMENT, "secrets": ["x"]}), "environment"),
        ({**envelope_parts(FETCH_EVENT, GOOD_ENVIRONMENT), "extra": (None, b"1")}, "extra"),
    ],
)
def test_malformed_envelopes_are_400_naming_the_part(client, parts, part):
    answer = client.post("echo", parts)
    assert answer.status_code == 400, answer.text
    assert answer.json()["error"] == "malformed_envelope"
    assert answer.json()["part"] == part
    assert answer.json()["message"]


def test_a_part_given_twice_is_refused(client):
    parts = list(envelope_parts(FETCH_EVENT, GOOD_ENVIRONMENT).items())
    answer = client.post("echo", [*parts, parts[0]])
    assert answer.status_code == 400
    assert answer.json()["part"] == "event"


def test_a_body_that_is_not_multipart_is_refused(client):
    body = json.dumps({"event": FETCH_EVENT}).encode()
    answer = client.session.post(
        f"{client.host.url}/integrations/echo/v1",
        data=body,
        headers={
            "Content-Type": "application/json",
            signing.HEADER: signing.sign(body, client.host.signing_key),
        },
        timeout=10,
    )
    assert answer.status_code == 400
    assert answer.json() == {
        "error": "malformed_envelope",
        "part": None,
        "message": "the envelope is not multipart/form-data with a boundary",
    }


def test_an_envelope_over_the_size_limit_is_413(client):
    answer = client.post("echo", envelope_parts(FETCH_EVENT, GOOD_ENVIRONMENT, b"x" * 1_100_000))
    assert answer.status_code == 413
    assert answer.json()["error"] == "envelope_too_large"


def test_each_call_is_logged_in_one_line(client):
    client.call("echo", ECHO, FETCH_EVENT)
    assert "event=fetch integration=echo version=1 status=201 outcome=ok duration_ms=" in (
        client.host.log()
    )


@pytest.mark.slow
def test_gunicorn_serves_the_host(tmp_path):
    port = free_port()
    command = ["-m", "gunicorn", "--worker-class", "gthread", "--threads", "4", "--bind"]
    gunicorn = subprocess.Popen(
        [sys.executable, *command, f"127.0.0.1:{port}", "integrations.runtime.host:create_app()"],
        cwd=PROJECT_ROOT,
        env={"PATH": "/usr/bin:/bin", "RUNTIME_SIGNING_KEY": "gunicorn-key"},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        url = f"http://127.0.0.1:{port}"
        wait_for_health(url, gunicorn)
        host = type("Host", (), {"url": url, "signing_key": "gunicorn-key"})()
        answer = EnvelopeClient(host, "http").call(
            "echo", ECHO, FETCH_EVENT, fetch_body=b"via gunicorn"
        )
        assert answer.status_code == 201
        assert answer.content == b"via gunicorn"
    finally:
        gunicorn.terminate()
        gunicorn.wait(timeout=10)


def test_many_concurrent_calls_are_all_served(client):
    def call(index):
        body = f"call {index}".encode()
        return EnvelopeClient(client.host).call("echo", ECHO, FETCH_EVENT, fetch_body=body)

    with ThreadPoolExecutor(max_workers=24) as executor:
        answers = list(executor.map(call, range(96)))
    assert [answer.status_code for answer in answers] == [201] * 96
    assert [answer.content for answer in answers] == [f"call {i}".encode() for i in range(96)]
