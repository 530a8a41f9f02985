"""The checks that run the code (issue 13, point 3): ``check`` and ``publish`` load the script
in a sandbox and refuse what the platform could never run, each with its exact message.

Twice: ``docplatform-integration check`` as an author runs it (a process of its own, no
platform), and publishing through the REST API, where the real runtime host loads the code.
"""

import os
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
from pathlib import Path

import pytest
import requests
import yaml
from docplatform_sdk import signing
from docplatform_sdk.codebundle import CodeBundle
from docplatform_sdk.manifest import EVENT_SCOPES

from docplatform.events.catalogue import CATALOGUE
from integrations.environment import runtime_signing_key
from integrations.models import Integration
from tests.api_helpers import api_client
from tests.conftest import wait_until
from tests.integrations.conftest import minimal_manifest
from tests.integrations.test_api_catalogue import upload, zip_bundle
from tests.processes import manage_py

CONSOLE_SCRIPT = Path(sys.executable).with_name("docplatform-integration")
NO_PLATFORM = ("DJANGO_SETTINGS_MODULE", "DATABASE_URL", "DOCPLATFORM_API", "DOCPLATFORM_TOKEN")
MANIFEST = "service-manifest.yaml"
HEADER = "from docplatform_sdk import block, create_component, create_integration, text\n"
COMPONENT = 'greeter = create_component("greeter", render=lambda element, context: block())\n'
BARE = "integration = create_integration()\n"
WITH_GREETER = HEADER + COMPONENT + "integration = create_integration(components=[greeter])\n"
UNCONFINED_NOTE = (
    "note: bubblewrap (bwrap) is not installed: the code is loaded without a sandbox, "
    "as you, to check it"
)
WITH_SCRIPT = {"script": "main.py", "network": {"fetch": []}}  # it calls no other host
BUTTON = {
    "account": {
        "properties": {
            "connection": {
                "type": "button",
                "title": "Connect",
                "description": "Connect an account.",
                "button_text": "Connect",
                "callback_url": "/oauth",
            },
            "channel": {
                "type": "string",
                "title": "Channel",
                "description": "Where to post.",
                "completion_url": "/channels",
            },
        }
    }
}

# (manifest fields, files, the errors as `path: message`, the warnings)
CASES = {
    "a load error names the author's file and line": (
        WITH_SCRIPT,
        {"main.py": HEADER + "\n\nvalue = undefined_name\nintegration = create_integration()\n"},
        ["main.py:4:9: NameError: name 'undefined_name' is not defined"],
        [],
    ),
    "an error in a module the script imports names that module": (
        WITH_SCRIPT,
        {
            "main.py": "import helpers\n" + HEADER + "integration = create_integration()\n",
            "helpers.py": "RATE = 1\nRATIO = RATE / 0\n",
        },
        ["helpers.py:2:9: ZeroDivisionError: division by zero"],
        [],
    ),
    "a syntax error in an imported module names its line": (
        WITH_SCRIPT,
        {
            "main.py": "from lib import helpers\n" + HEADER + BARE,
            "lib/__init__.py": "",
            "lib/helpers.py": "def broken(:\n    pass\n",
        },
        ["lib/helpers.py:1:12: SyntaxError: invalid syntax"],
        [],
    ),
    "a package the runtime does not have": (
        WITH_SCRIPT,
        {"main.py": "import yaml\n" + HEADER + "integration = create_integration()\n"},
        [
            "main.py:1:1: ModuleNotFoundError: No module named 'yaml'. The runtime has only "
            "Python's standard library, docplatform_sdk, oauthlib and jwt (PyJWT): to use yaml, "
            "put its .py "
            "files in the integration's folder (pip install --no-deps --target . yaml); only "
            "pure-Python code is bundled"
        ],
        [],
    ),
    "code that writes where the loader writes garbles nothing but its own check": (
        WITH_SCRIPT,
        {"main.py": "import os\n\nfor fd in range(3, 16):\n    try:\n"
         "        os.write(fd, b'{\"integration\": {\"events\": [1]}}\\n')\n"
         "    except OSError:\n        pass\nos._exit(0)\n"},
        ["main.py: loading it wrote something that is not a description of the code"],
        [],
    ),
    "no module-level integration": (
        WITH_SCRIPT,
        {"main.py": HEADER + "app = create_integration()\n"},
        ["main.py: defines no module-level `integration`: bind integration = "
         "create_integration(...)"],
        [],
    ),
    "an integration that create_integration did not make": (
        WITH_SCRIPT,
        {"main.py": "integration = {'events': {}}\n"},
        ["main.py: its module-level `integration` is a dict, not what create_integration(...) "
         "returns"],
        [],
    ),
    "a block with no component, with a did-you-mean": (
        {**WITH_SCRIPT, "blocks": [{"id": "greeters", "title": "G", "description": "A block."}]},
        {"main.py": WITH_GREETER},
        ["blocks[0].id: main.py has no component 'greeters' (add create_component('greeters', "
         "render=...) to its components); did you mean 'greeter'?"],
        [],
    ),
    "a configuration componentId with no component": (
        {**WITH_SCRIPT, "configurations": {"site": {"componentId": "settings-screen"}}},
        {"main.py": WITH_GREETER},
        ["configurations.site.componentId: main.py has no component 'settings-screen' (add "
         "create_component('settings-screen', render=...) to its components)"],
        [],
    ),
    "a handler for an event the platform never fires, with a did-you-mean": (
        WITH_SCRIPT,
        {"main.py": HEADER + "integration = create_integration(events={"
         "'space_contnet_updated': lambda event, context: None})\n"},
        ["main.py: the handler for 'space_contnet_updated' is never called: the platform fires "
         "no such event; did you mean 'space_content_updated'?"],
        [],
    ),
    "a ui_render handler: components are the way": (
        WITH_SCRIPT,
        {"main.py": HEADER + "integration = create_integration(events={"
         "'ui_render': lambda event, context: None})\n"},
        ["main.py: the handler for 'ui_render' is never called: components are the way: "
         "create_component('my-block', render=...) in create_integration(components=[...])"],
        [],
    ),
    "a fetch handler among the events": (
        WITH_SCRIPT,
        {"main.py": HEADER + "integration = create_integration(events={"
         "'fetch': lambda request, context: None})\n"},
        ["main.py: the handler for 'fetch' is never called: requests go to "
         "create_integration(fetch=...)"],
        [],
    ),
    "a handler whose event the scopes do not grant is a warning naming the scope": (
        {**WITH_SCRIPT, "scopes": ["site:views:read"]},
        {"main.py": HEADER + "integration = create_integration(events={"
         "'space_content_updated': lambda event, context: None, "
         "'installation_setup': lambda event, context: None})\n"},
        [],
        ["main.py: handler for space_content_updated: the manifest's scopes do not grant it; "
         "add space:content:read"],
    ),
    "a visitor handler the scopes do not grant is a warning naming the scope": (
        {**WITH_SCRIPT, "scopes": ["site:visitor:auth"]},
        {"main.py": HEADER + "integration = create_integration("
         "visitor_authentication=lambda request, context: None, "
         "visitor_claims=lambda event, context: {})\n"},
        [],
        ["main.py: handler visitor_claims: the manifest's scopes do not grant it; "
         "add site:adaptive:write"],
    ),
    "a button and a completion_url without a script": (
        {"configurations": BUTTON, "blocks": [{"id": "g", "title": "G", "description": "B."}]},
        {},
        ["blocks[0].id: no component renders 'g': the manifest has no script (add script: "
         "main.py with create_component('g', render=...))",
         "configurations.account.properties.connection.callback_url: no code answers it: the "
         "manifest has no script (its fetch handler answers /oauth)",
         "configurations.account.properties.channel.completion_url: no code answers it: the "
         "manifest has no script (its fetch handler answers /channels)"],
        [],
    ),
    "a button and a completion_url with a script that has no fetch": (
        {**WITH_SCRIPT, "configurations": BUTTON},
        {"main.py": HEADER + "integration = create_integration()\n"},
        ["configurations.account.properties.connection.callback_url: main.py has no fetch "
         "handler to answer it: pass create_integration(fetch=...)",
         "configurations.account.properties.channel.completion_url: main.py has no fetch "
         "handler to answer it: pass create_integration(fetch=...)"],
        [],
    ),
}  # fmt: skip


def write(root: Path, fields: dict, files: dict) -> Path:
    root.mkdir(parents=True)
    (root / MANIFEST).write_text(yaml.safe_dump(minimal_manifest(**fields), sort_keys=False))
    for name, content in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(content)
    return root


def console(*args: str, **env: str) -> subprocess.CompletedProcess:
    """``docplatform-integration`` in an author's shell: no platform settings at all."""
    base = {name: value for name, value in os.environ.items() if name not in NO_PLATFORM}
    return subprocess.run(
        [str(CONSOLE_SCRIPT), *args],
        capture_output=True,
        text=True,
        env={**base, **env},
        timeout=60,
    )


def printed(problems, prefix: str = "") -> list[str]:
    return [f"{prefix}{problem}" for problem in problems]


# --- docplatform-integration check, on the author's machine ---------------------------------


@pytest.mark.parametrize("case", CASES)
def test_check_refuses_with_the_exact_message(case, tmp_path):
    fields, files, errors, warnings = CASES[case]
    result = console("check", str(write(tmp_path / "hello", fields, files)), PATH="/nonexistent")
    lines = result.stdout.splitlines()
    assert lines[: len(warnings)] == printed(warnings, "warning: ")
    if errors:
        assert result.returncode == 1, result.stdout + result.stderr
        assert sorted(lines[len(warnings) :]) == sorted(errors)
        count = f"{len(errors)} problem{'s' if len(errors) > 1 else ''}"
        # A code problem is named by its place in a .py file: main.py, main.py:4:9.
        in_code = all(line.split(": ")[0].split(":")[0].endswith(".py") for line in errors)
        where = "the code" if in_code else "the manifest"
        assert f"error: {count} found in {where}" in result.stderr
    else:
        assert result.returncode == 0, result.stdout + result.stderr
        assert lines[len(warnings) :] == ["hello: the manifest is valid"]
    if "script" in fields:
        assert result.stderr.splitlines()[0] == UNCONFINED_NOTE  # no bwrap on this PATH


def test_publish_from_the_console_refuses_before_uploading(tmp_path):
    fields, files, errors, _ = CASES["a block with no component, with a did-you-mean"]
    folder = write(tmp_path / "hello", fields, files)
    # Nothing listens on the API: the refusal comes before any upload is tried.
    result = console("publish", str(folder), "--api", "http://127.0.0.1:9/api/v1", "--token", "t")
    assert result.returncode == 1
    assert result.stdout.splitlines() == errors
    assert "cannot be reached" not in result.stderr


@pytest.mark.slow
def test_the_scaffold_passes_every_code_check(tmp_path):
    assert console("new", str(tmp_path / "fresh"), "--organization", "acme").returncode == 0
    result = console("check", str(tmp_path / "fresh"))
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stdout.splitlines() == ["fresh: the manifest is valid"]


def test_what_the_code_prints_while_loading_cannot_forge_the_description(tmp_path):
    script = (
        "import sys\n"
        'print(\'{"integration": {"events": [], "components": ["x"], "fetch": true}}\')\n'
        'sys.stderr.write("noise\\n")\n'
        "value = undefined_name\n"
    )
    result = console("check", str(write(tmp_path / "hello", WITH_SCRIPT, {"main.py": script})))
    assert result.returncode == 1
    assert result.stdout.splitlines() == [
        "main.py:4:9: NameError: name 'undefined_name' is not defined"
    ]


@pytest.mark.slow
def test_a_script_that_never_finishes_loading_is_stopped(tmp_path):
    folder = write(tmp_path / "hello", WITH_SCRIPT, {"main.py": "while True:\n    pass\n"})
    result = console("check", str(folder), DOCPLATFORM_CHECK_TIMEOUT="1")
    assert result.returncode == 1
    assert result.stdout.splitlines() == ["main.py: did not finish loading within 1 s"]


def test_a_script_that_exits_while_loading(tmp_path):
    folder = write(tmp_path / "hello", WITH_SCRIPT, {"main.py": "import os\nos._exit(3)\n"})
    result = console("check", str(folder))
    assert result.returncode == 1
    assert result.stdout.splitlines() == ["main.py: the code exited with status 3 while loading"]


def test_sys_exit_and_base_exceptions_while_loading_are_load_errors(tmp_path):
    folder = write(tmp_path / "hello", WITH_SCRIPT, {"main.py": "import sys\n\nsys.exit('bye')\n"})
    result = console("check", str(folder))
    assert result.returncode == 1
    assert result.stdout.splitlines() == ["main.py:3:1: SystemExit: bye"]


class ListeningServer:
    """A TCP server on this machine that counts the connections it accepts."""

    def __init__(self):
        self.socket = socket.create_server(("127.0.0.1", 0))
        self.port = self.socket.getsockname()[1]
        self.accepted = 0
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self):
        while True:
            try:
                connection, _ = self.socket.accept()
            except OSError:
                return
            self.accepted += 1
            connection.close()


def test_with_bubblewrap_the_local_check_has_no_network(tmp_path):
    if shutil.which("bwrap") is None:
        pytest.fail("bubblewrap is not installed (apt-get install bubblewrap; .ci/run does)")
    server = ListeningServer()
    script = f"import socket\nsocket.create_connection(('127.0.0.1', {server.port}), timeout=2)\n"
    result = console("check", str(write(tmp_path / "hello", WITH_SCRIPT, {"main.py": script})))
    assert result.returncode == 1
    assert server.accepted == 0
    [line] = result.stdout.splitlines()
    assert line.startswith(("main.py:2:1: OSError: ", "main.py:2:1: ConnectionRef"))
    assert "note:" not in result.stderr


# --- Publishing through the platform: the runtime host loads the code ---------------------


@pytest.mark.django_db
@pytest.mark.parametrize("case", CASES)
def test_publish_refuses_with_the_exact_message(case, org_admin):
    fields, files, errors, warnings = CASES[case]
    text = yaml.safe_dump(minimal_manifest(**fields), sort_keys=False)
    response = upload(api_client(org_admin), zip_bundle({MANIFEST: text, **files}))
    if errors:
        assert response.status_code == 400, response.json()
        body = response.json()
        assert body["type"] == "validation_error"
        found = sorted(f"{error['attr']}: {error['detail']}" for error in body["errors"])
        assert found == sorted(errors)
        assert not Integration.objects.filter(name="hello").exists()
    else:
        assert response.status_code == 201, response.json()
        shown = [f"{w['path']}: {w['message']}" for w in response.json()["warnings"]]
        assert shown == warnings


@pytest.mark.slow
@pytest.mark.django_db
def test_publish_loads_the_code_in_the_sandbox_never_on_the_web_tier(org_admin, tmp_path):
    """The script writes a file where it runs and reads the platform's environment: it runs
    in the host's sandbox (nothing on this machine changes, no platform key is seen)."""
    marker = tmp_path / "ran-on-the-web-tier"
    script = (
        HEADER + "import os\n"
        f"open({str(marker)!r}, 'w').close()\n"
        "assert 'SECRET_KEY' not in os.environ, 'the platform environment leaked'\n"
        "integration = create_integration()\n"
    )
    text = yaml.safe_dump(minimal_manifest(**WITH_SCRIPT), sort_keys=False)
    response = upload(api_client(org_admin), zip_bundle({MANIFEST: text, "main.py": script}))
    assert response.status_code == 400
    [error] = response.json()["errors"]
    assert error["attr"] == "main.py:3:1"
    assert error["detail"].startswith(("FileNotFoundError: ", "PermissionError: ", "OSError: "))
    assert not marker.exists()


@pytest.mark.slow
@pytest.mark.django_db
def test_publish_stops_code_that_never_finishes_loading(org_admin):
    files = {
        MANIFEST: yaml.safe_dump(minimal_manifest(**WITH_SCRIPT)),
        "main.py": "while True:\n    pass\n",
    }
    response = upload(api_client(org_admin), zip_bundle(files))
    assert response.status_code == 400
    [error] = response.json()["errors"]
    # The session's runtime host gives a call 3 s (tests/conftest.py).
    assert (error["attr"], error["detail"]) == ("main.py", "did not finish loading within 3 s")


@pytest.mark.django_db
def test_publish_is_refused_while_the_runtime_host_is_unreachable(org_admin, settings):
    settings.RUNTIME_URL = "http://127.0.0.1:9"
    files = {MANIFEST: yaml.safe_dump(minimal_manifest(**WITH_SCRIPT)), "main.py": HEADER}
    response = upload(api_client(org_admin), zip_bundle(files))
    assert response.status_code == 503
    assert response.json() == {
        "type": "server_error",
        "errors": [
            {
                "code": "code_checks_unavailable",
                "detail": "the code cannot be checked: the runtime host cannot be reached "
                "(ConnectionError); nothing was published, try again later",
                "attr": None,
            }
        ],
    }
    assert not Integration.objects.filter(name="hello").exists()
    # Without code there is nothing to load: publish needs no runtime host.
    plain = upload(
        api_client(org_admin), zip_bundle({MANIFEST: yaml.safe_dump(minimal_manifest())})
    )
    assert plain.status_code == 201


@pytest.mark.slow
@pytest.mark.django_db(transaction=True)
def test_manage_py_publish_names_the_runtime_it_could_not_reach(org_admin, tmp_path):
    folder = write(tmp_path / "hello", WITH_SCRIPT, {"main.py": HEADER})
    result = manage_py(
        "integration", "publish", str(folder), "--as", org_admin.username,
        RUNTIME_URL="http://127.0.0.1:9",
    )  # fmt: skip
    assert result.returncode == 1
    assert result.stderr.strip().splitlines()[-1] == (
        "CommandError: the code cannot be checked: the runtime host cannot be reached "
        "(ConnectionError); nothing was published, try again later "
        "(RUNTIME_URL http://127.0.0.1:9)"
    )


@pytest.mark.slow
def test_manage_py_check_says_only_that_the_runtime_host_cannot_be_reached(tmp_path):
    folder = write(tmp_path / "hello", WITH_SCRIPT, {"main.py": HEADER})
    result = manage_py("integration", "check", str(folder), RUNTIME_URL="http://127.0.0.1:9")
    assert result.returncode == 1
    assert result.stdout == ""
    assert result.stderr.strip().splitlines()[-1] == (
        "CommandError: the runtime host cannot be reached (ConnectionError) "
        "(RUNTIME_URL http://127.0.0.1:9)"
    )


@pytest.mark.slow
def test_manage_py_check_loads_the_code_in_the_runtime_host(tmp_path):
    fields, files, errors, _ = CASES["a load error names the author's file and line"]
    result = manage_py("integration", "check", str(write(tmp_path / "hello", fields, files)))
    assert result.returncode == 1
    assert result.stdout.splitlines() == errors
    assert result.stderr.strip().splitlines()[-1] == "CommandError: 1 problem found in the code"


def test_the_inspect_operation_takes_only_signed_bundles(runtime_host):
    bundle = CodeBundle(script="main.py", files={"main.py": "integration = 1\n"}).encode()
    unsigned = requests.post(f"{runtime_host.url}/inspect", data=bundle, timeout=10)
    assert unsigned.status_code == 401
    assert unsigned.json()["error"] == "invalid_signature"
    wrong = requests.post(
        f"{runtime_host.url}/inspect",
        data=bundle,
        headers={signing.HEADER: signing.sign(bundle, "another key")},
        timeout=10,
    )
    assert wrong.status_code == 401
    garbage = b'{"script": "../x.py", "files": {"../x.py": ""}}'
    refused = requests.post(
        f"{runtime_host.url}/inspect",
        data=garbage,
        headers={signing.HEADER: signing.sign(garbage, runtime_signing_key())},
        timeout=10,
    )
    assert refused.status_code == 400
    assert refused.json()["error"] == "malformed_bundle"
    assert requests.get(f"{runtime_host.url}/inspect", timeout=10).status_code == 405
    signed = requests.post(
        f"{runtime_host.url}/inspect",
        data=bundle,
        headers={signing.HEADER: signing.sign(bundle, runtime_signing_key())},
        timeout=10,
    )
    assert signed.json() == {"description": {"integration": None, "found": "an int"}}


@pytest.mark.slow
def test_code_checks_at_once_are_bounded_and_the_rest_refused_as_busy(tmp_path, settings):
    """A host loads at most RUNTIME_INSPECT_CONCURRENCY bundles at once: publishing in a loop
    cannot take its processors from the integrations it runs. One more waits up to 2 s, then
    is answered 503 busy, which publish reports as the code not checked (nothing published)."""
    from integrations.gateway.client import inspect_code
    from integrations.gateway.failures import PlatformFault
    from tests.integrations.runtime.support import RunningHost

    stage = Path(tempfile.mkdtemp(prefix="stage-", dir="/tmp"))  # open to the worker user
    stage.chmod(0o755)
    host = RunningHost(
        runtime_signing_key(),
        tmp_path / "host.log",
        RUNTIME_INSPECT_CONCURRENCY="1",
        RUNTIME_CALL_TIMEOUT="8",
        RUNTIME_STAGE_DIR=str(stage),
    )
    settings.RUNTIME_URL = host.frames_url
    slow = CodeBundle(
        script="main.py", files={"main.py": "import time\ntime.sleep(5)\nintegration = 1\n"}
    ).encode()
    quick = CodeBundle(script="main.py", files={"main.py": "integration = 2\n"}).encode()

    def inspect(bundle):
        return requests.post(
            f"{host.url}/inspect",
            data=bundle,
            headers={signing.HEADER: signing.sign(bundle, runtime_signing_key())},
            timeout=20,
        )

    try:
        answers = {}
        loading = threading.Thread(target=lambda: answers.update(slow=inspect(slow)))
        loading.start()
        wait_until(lambda: any(stage.glob("*/bundles/inspect-*")), timeout=10)  # it loads
        busy = inspect(quick)
        assert busy.status_code == 503
        assert busy.headers["Retry-After"] == "1"
        assert busy.json() == {
            "error": "busy",
            "message": "1 code checks are running; try again in a moment",
        }
        with pytest.raises(PlatformFault) as refused:
            inspect_code(quick)
        assert refused.value.code == "code_checks_unavailable"
        assert str(refused.value) == (
            "the code cannot be checked: the runtime host answered 503 busy; nothing was "
            "published, try again later"
        )
        loading.join(timeout=20)
        assert answers["slow"].json()["description"]["found"] == "an int"
        assert inspect(quick).json() == {"description": {"integration": None, "found": "an int"}}
    finally:
        host.stop()
        shutil.rmtree(stage, ignore_errors=True)


# --- One home for the events and their scopes -----------------------------------------------


def test_the_platform_fires_exactly_the_events_the_sdk_knows_with_the_same_scopes():
    built_in = {name: event.scope for name, event in CATALOGUE.items() if name in EVENT_SCOPES}
    assert built_in == EVENT_SCOPES
    others = set(CATALOGUE) - set(EVENT_SCOPES)
    assert all(CATALOGUE[name].where == "installation" for name in others)  # apps' own (ping)
