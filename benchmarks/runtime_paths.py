"""The runtime's paths that ``public_endpoint.py`` times besides its load: the integrations it
publishes, the serial requests (bare view, public endpoint, component render and action), the
dispatch of an event to an integration's handler through the Celery worker, and the cold
start (the first call after a publish). Runs in the benchmark's process, Django set up."""

import http.client
import json
import time
from pathlib import Path
from urllib.parse import urlsplit

#: The public endpoint's integration; ``{message}`` changes at each cold start's publish.
ENDPOINT_SCRIPT = """\
from docplatform_sdk import Response, create_integration

MESSAGE = {message!r}


def fetch(request, context):
    return Response.json({{"message": MESSAGE}})


integration = create_integration(fetch=fetch)
"""
ENDPOINT_MANIFEST = """\
name: bench-endpoint
title: Bench endpoint
description: Answers its public endpoint.
organization: bench
visibility: private
script: main.py
scopes: []
"""
MESSAGE = "Hello, bench!"  # the bare view's body is {"message": "Hello, bench!"} too
#: A space's integration: a counter block (``counter``: render, and the ``increment``
#: action) and a ``space_content_updated`` handler that prints when it ran (the log line's
#: output), with the revision id it was given.
SPACE_SCRIPT = """\
import time

from docplatform_sdk import block, button, create_component, create_integration, text


def counter_initial_state(props):
    return {"count": 0}


def counter_action(element, action, context):
    if action.action == "increment":
        return {"state": {"count": element.state["count"] + 1}}
    return {}


def counter_render(element, context):
    return block(
        text(f"Count: {element.state['count']}"),
        button("Increment", on_press={"action": "increment"}),
    )


def on_content_updated(event, context):
    print(f"handled {event.revisionId} at {time.time():.6f}")


integration = create_integration(
    components=[
        create_component(
            "counter",
            initial_state=counter_initial_state,
            action=counter_action,
            render=counter_render,
        )
    ],
    events={"space_content_updated": on_content_updated},
)
"""
SPACE_MANIFEST = """\
name: bench-space
title: Bench space
description: A counter block, and a handler of content updates.
organization: bench
visibility: private
target: space
script: main.py
scopes:
  - space:content:read
blocks:
  - id: counter
    title: Counter
    description: A number that counts up.
"""
#: ``api``, for comparison: the installation read through the same API with the same token,
#: no runtime call (what the render's web request costs without the call).
SERIAL_KINDS = ("bare", "endpoint", "render", "action", "api")


def publish(folder: Path, manifest: str, script: str, admin):
    """Write the integration's two files into ``folder`` and publish them: the new version."""
    from integrations.services import integration_publish_folder

    folder.mkdir(exist_ok=True)
    (folder / "service-manifest.yaml").write_text(manifest)
    (folder / "main.py").write_text(script)
    return integration_publish_folder(path=folder, publisher=admin).version


def setup_platform(scratch: Path) -> dict:
    """An organization, its admin (and a personal API token of theirs), a space; the endpoint
    integration installed in the organization (covering no space, so the space's events do
    not reach it), the space integration installed in the space."""
    from django.contrib.auth import get_user_model

    from docplatform.models import Space
    from docplatform.organizations.services import organization_create
    from docplatform.services import api_token_create
    from integrations.models import Installation
    from integrations.services.installations import installation_create

    admin = get_user_model().objects.create_user("bench-admin")
    organization = organization_create(subdomain="bench", title="Bench", admin=admin)
    space = Space.objects.create(organization=organization, title="Bench space")
    endpoint_version = publish(
        scratch / "endpoint", ENDPOINT_MANIFEST, ENDPOINT_SCRIPT.format(message=MESSAGE), admin
    )
    endpoint = installation_create(
        user=admin,
        integration=endpoint_version.integration,
        organization=organization,
        space_selection=Installation.SpaceSelection.SELECTED,
    )
    space_version = publish(scratch / "space", SPACE_MANIFEST, SPACE_SCRIPT, admin)
    in_space = installation_create(
        user=admin, integration=space_version.integration, organization=organization, space=space
    )
    _, token = api_token_create(user=admin, name="bench")
    return {
        "admin": admin,
        "organization": organization,
        "space": space,
        "endpoint": endpoint,
        "in_space": in_space,
        "token": token,
        "folder": scratch / "endpoint",
    }


# --- Serially --------------------------------------------------------------------------------


class SerialClient:
    """One keep-alive connection to the web server per origin, one request at a time."""

    def __init__(self, web: str, integrations: str, data: dict, bare_body: bytes):
        web_parts, integration_parts = urlsplit(web), urlsplit(integrations)
        self.web = http.client.HTTPConnection(web_parts.hostname, web_parts.port, timeout=30)
        self.integrations = http.client.HTTPConnection(
            integration_parts.hostname, integration_parts.port, timeout=30
        )
        render = f"/api/v1/installations/{data['in_space'].pk}/components/counter/render/"
        headers = {"Authorization": f"Bearer {data['token']}", "Content-Type": "application/json"}
        action = {"instance": "bench-action", "action": {"action": "increment"}}
        self.requests = {
            "bare": (self.web, "GET", "/bench/bare/", None, {}),
            "endpoint": (
                self.integrations, "GET", f"/installations/{data['endpoint'].pk}/", None, {}
            ),
            "render": (self.web, "POST", render, json.dumps({"instance": "bench-render"}), headers),
            "action": (self.web, "POST", render, json.dumps(action), headers),
            "api": (self.web, "GET", f"/api/v1/installations/{data['in_space'].pk}/", None,
                    headers),
        }  # fmt: skip
        self.installation_id = str(data["in_space"].pk).encode()
        self.bare_body = bare_body

    def timed(self, kind: str) -> float:
        """One request of ``kind``: its seconds; any unexpected answer fails the run."""
        connection, method, path, body, headers = self.requests[kind]
        started = time.perf_counter()
        connection.request(method, path, body=body, headers=headers)
        answer = connection.getresponse()
        content = answer.read()
        elapsed = time.perf_counter() - started
        if kind in ("bare", "endpoint"):
            good = answer.status == 200 and content == self.bare_body
        elif kind == "api":
            good = answer.status == 200 and self.installation_id in content
        else:
            good = answer.status == 200 and b"Count: " in content
        if not good:
            raise RuntimeError(f"{kind} {method} {path}: {answer.status} {content[:300]!r}")
        return elapsed

    def rounds(self, count: int, block: int) -> dict[str, list[float]]:
        """``count`` requests of each kind, in blocks of ``block`` in a row, the kinds taking
        turns (bare, endpoint, render, action, bare, ...) so that a slower spell of the
        machine falls on all of them."""
        found = {kind: [] for kind in SERIAL_KINDS}
        while len(found["bare"]) < count:
            size = min(block, count - len(found["bare"]))
            for kind in SERIAL_KINDS:
                # A connection left idle during another kind's block may have been closed
                # (gunicorn keeps an idle one 2 s): a fresh one, before the block, untimed.
                connection = self.requests[kind][0]
                connection.close()
                connection.connect()
                found[kind] += [self.timed(kind) for _ in range(size)]
        return found

    def close(self) -> None:
        self.web.close()
        self.integrations.close()


# --- Event dispatch --------------------------------------------------------------------------


def dispatch_one(data: dict, number: int, timeout: float = 30) -> dict:
    """Fire ``space_content_updated`` in a transaction (committed: the delivery is queued to
    the Celery worker), then wait for the handler's log line. The seconds from just before
    ``fire`` to the handler's run (the time it printed, same clock: the sandbox shares the
    machine's), to the log line seen here (polled every 5 ms), and the log line's duration
    (the runtime call as the worker timed it, ms)."""
    from django.db import transaction

    from docplatform import events
    from integrations.models import IntegrationLog

    revision = f"bench-{number}"
    before = IntegrationLog.objects.order_by("-pk").values_list("pk", flat=True).first() or 0
    lines = IntegrationLog.objects.filter(
        pk__gt=before,
        installation=data["in_space"],
        kind="event",
        output__contains=f"handled {revision} at",
    )
    fired = time.time()
    with transaction.atomic():
        events.fire(
            "space_content_updated",
            organization=data["organization"],
            space=data["space"],
            spaceId=data["space"].pk,
            revisionId=revision,
        )
    committed = time.time()
    deadline = time.monotonic() + timeout
    while (line := lines.first()) is None:
        if time.monotonic() > deadline:
            raise RuntimeError(f"event {revision}: no log line of its handler after {timeout} s")
        time.sleep(0.005)
    seen = time.time()
    if line.outcome != "ok":
        raise RuntimeError(f"event {revision}: {line.outcome} {line.error[:300]}")
    handled = float(line.output.split(f"handled {revision} at ", 1)[1].split()[0])
    return {
        "handler": handled - fired,
        "commit": committed - fired,
        "logged": seen - fired,
        "call": float(line.duration_ms),
    }


def dispatch(data: dict, count: int, pause: float) -> dict[str, list[float]]:
    """``count`` events, one at a time (the next once the previous one's line is written)."""
    found: dict[str, list[float]] = {}
    for number in range(count):
        for name, value in dispatch_one(data, number).items():
            found.setdefault(name, []).append(value)
        time.sleep(pause)
    return found


# --- Cold start ------------------------------------------------------------------------------


def cold_starts(data: dict, integrations: str, count: int, pause: float) -> list[float]:
    """``count`` times: publish a new version of the endpoint's integration (its message
    changed; untimed), wait ``pause`` s (the host's spare workers made again), then time the
    first ``GET`` of the endpoint on a kept connection: the platform sends the envelope, the
    host answers 409 ``bundle_required``, the platform sends it again with the bundle, the
    host takes a worker and loads the code, which answers."""
    from django.db import connection as db

    parts = urlsplit(integrations)
    client = http.client.HTTPConnection(parts.hostname, parts.port, timeout=30)
    path = f"/installations/{data['endpoint'].pk}/"
    times = []
    for number in range(count):
        message = f"Hello, bench {number}!"
        script = ENDPOINT_SCRIPT.format(message=message)
        publish(data["folder"], ENDPOINT_MANIFEST, script, data["admin"])
        db.close()
        time.sleep(pause)
        client.close()  # gunicorn closes a connection idle for 2 s: a fresh one, untimed
        client.connect()
        started = time.perf_counter()
        client.request("GET", path)
        answer = client.getresponse()
        body = answer.read()
        times.append(time.perf_counter() - started)
        if answer.status != 200 or json.loads(body) != {"message": message}:
            raise RuntimeError(f"the first call of version {number}: {answer.status} {body!r}")
    client.close()
    return times
