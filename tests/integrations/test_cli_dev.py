"""The author's loop end to end, through real processes: a token made on the developer
settings page, ``login``, ``new``, ``dev`` against a running platform (live web server,
Celery worker, runtime host), an edit republished within a second as a development version
the author's installation runs, a content update (through the API, then as ``trigger`` sends
it) whose handler's print shows in ``dev`` and in ``tail``, and a ``fetch`` through the
public endpoint logged with its status."""

import html
import re
import time

import pytest
import requests
from django.test import Client

from docplatform.services import api_token_create
from integrations.models import Installation
from tests.factories import SpaceFactory
from tests.integrations.cli_support import Author
from tests.integrations.conftest import minimal_manifest

pytestmark = [pytest.mark.slow, pytest.mark.usefixtures("celery_worker")]


def token_from_developer_settings(user) -> str:
    """Make a personal token as the person does: the developer settings page's form."""
    browser = Client()
    browser.force_login(user)
    page = browser.get("/marketplace/settings/developer/").content.decode()
    form_id = re.search(r'name="form_id" value="([^"]+)"', page)[1]
    answer = browser.post(
        "/marketplace/settings/developer/",
        {"name": "my laptop", "expiration": "90", "form_id": form_id},
    )
    assert answer.status_code == 200
    return html.unescape(
        re.search(r'class="token-value"[^>]*>([^<]+)<', answer.content.decode())[1]
    ).strip()


def test_login_new_dev_edit_event_fetch_and_tail(tmp_path, runtime, live_server, org_admin):
    api = live_server.url + "/api/v1"
    author = Author(tmp_path / "home")
    token = token_from_developer_settings(org_admin)
    assert token.startswith("dpt_")

    login = author.run("login", "--api", api, "--token", token)
    assert login.returncode == 0, login.stderr
    new = author.run("new", "greeter", "--organization", "acme")
    assert new.returncode == 0, new.stderr
    script = author.home / "greeter" / "main.py"

    dev = author.start("dev", "greeter")
    try:
        dev.wait_for(r"^published greeter version 1$")
        installation_id = dev.wait_for(r"^installed in acme: (\w+)$")[1]
        dev.wait_for(rf"^installation {installation_id} is active$")
        dev.wait_for(rf"^installation {installation_id} runs development versions$")
        endpoint = dev.wait_for(r"^public endpoint: (\S+)$")[1]
        dev.wait_for(
            r"^send it an event: docplatform-integration trigger space_content_updated greeter$"
        )
        dev.wait_for(r"^watching greeter for changes")

        # A save is noticed within a second and published.
        script.write_text(script.read_text().replace("content updated", "content changed"))
        saved = time.monotonic()
        dev.wait_for(r"^greeter changed: publishing$", timeout=5)
        noticed = time.monotonic() - saved
        assert noticed < 1, noticed
        dev.wait_for(
            r"^published greeter development version 2: development installations run it, "
            r"the others version 1$"
        )

        # A broken save prints its problems; the session goes on.
        working = script.read_text()
        script.write_text(working + "\ndef broken(:\n")
        dev.wait_for(r"^main\.py:\d+:\d+: SyntaxError: ")
        dev.wait_for(r"^not published: 1 problem found in the code; fix it and save$")
        script.write_text(working)
        dev.wait_for(r"^greeter is unchanged: development version 2 stays current$")

        # A content update through the API: the handler's print shows in dev.
        space = SpaceFactory(organization=org_admin.memberships.get().organization)
        update = requests.post(
            f"{api}/spaces/{space.id}/revisions/",
            json={"pages": [{"path": "intro", "title": "Intro", "body": "Hi"}]},
            headers={"Authorization": f"Bearer {token}"},
            timeout=20,
        )
        assert update.status_code == 201, update.text
        revision = update.json()["id"]
        dev.wait_for(r" event space_content_updated ok 200 \d+ ms v2$")
        dev.wait_for(rf"^  \| space {space.id}: content changed, revision {revision}$")

        # The command dev suggested: the same event made by the platform, handled the same.
        sent = author.run("trigger", "space_content_updated", "greeter")
        assert sent.returncode == 0, sent.stdout + sent.stderr
        assert re.fullmatch(
            rf"sent space_content_updated to installation {installation_id}: delivery (\d+), "
            r"eventId [0-9a-f-]{36}\ndelivery \1 succeeded \(.+\)\n",
            sent.stdout,
        ), sent.stdout
        dev.wait_for(rf"^  \| space {space.id}: content changed, revision {revision}$")

        # A fetch through the public endpoint, logged with its status.
        answer = requests.get(endpoint + "/?name=Ada", timeout=20)
        assert answer.json() == {"message": "Hello, Ada!"}
        dev.wait_for(r" fetch GET / ok 200 \d+ ms v2$")
    finally:
        exit_code = dev.stop()
    assert exit_code == 0
    dev.wait_for(r"^stopped$", timeout=5)
    assert Installation.objects.filter(integration__name="greeter").count() == 1

    tail = author.run("tail", "greeter", "--no-follow", "--since", "1h")
    assert tail.returncode == 0, tail.stderr
    assert f"  | space {space.id}: content changed, revision {revision}" in tail.stdout
    fetches = author.run("tail", "greeter", "--no-follow", "--kind", "fetch")
    assert re.search(
        rf"fetch GET / ok 200 \d+ ms v2 \[{installation_id}\]$", fetches.stdout, re.M
    ), fetches.stdout
    assert "space_content_updated" not in fetches.stdout


def test_dev_usage_errors_exit_2(tmp_path):
    author = Author(tmp_path / "home")
    folder = author.home / "x"
    assert author.run("new", str(folder), "--organization", "acme").returncode == 0
    api = ["--api", "http://127.0.0.1:9/api/v1", "--token", "dpt_x"]
    for arguments, message in [
        (["dev", str(tmp_path / "missing"), *api], "no such file or folder"),
        (["dev", str(folder / "main.py"), *api], "dev takes an integration folder"),
        (["dev", str(folder), "--env-file", "/nope", *api], "--env-file /nope: no such file"),
        (["dev", str(folder)], "not logged in: run docplatform-integration login"),
    ]:
        done = author.run(*arguments)
        assert (done.returncode, message in done.stderr) == (2, True), (arguments, done)


def test_dev_keeps_going_while_the_platform_cannot_be_reached(tmp_path):
    author = Author(tmp_path / "home")
    assert author.run("new", "x", "--organization", "acme").returncode == 0
    dev = author.start("dev", "x", "--api", "http://127.0.0.1:9/api/v1", "--token", "dpt_x")
    try:
        dev.wait_for(r"^not published: http://127\.0\.0\.1:9/api/v1 cannot be reached")
        dev.wait_for(r"^watching x for changes")
        (author.home / "x" / "main.py").write_text("integration = None\n")
        dev.wait_for(r"^x changed: publishing$")
        dev.wait_for(r"^not published: 1 problem found in the code; fix it and save$")
    finally:
        assert dev.stop() == 0
    dev.wait_for(r"^stopped$", timeout=5)


@pytest.mark.django_db(transaction=True)
def test_dev_installs_with_the_values_given_and_says_what_is_missing(
    tmp_path, live_server, org_admin, write_integration
):
    author = Author(tmp_path / "home")
    token = api_token_create(user=org_admin, name="laptop")[1]
    login = author.run("login", "--api", live_server.url + "/api/v1", "--token", token)
    assert login.returncode == 0, login.stderr
    required = {
        "account": {
            "properties": {"api_key": {"type": "string", "title": "Key", "description": "d"}},
            "required": ["api_key"],
        }
    }
    script = "from docplatform_sdk import create_integration\nintegration = create_integration()\n"
    for name, values, status in [
        ("keyed", ["--set", "api_key=k-1"], "active"),
        ("keyless", [], "pending"),
    ]:
        folder = write_integration(
            minimal_manifest(name=name, script="main.py", configurations=required),
            files={"main.py": script},
            folder=name,
        )
        dev = author.start("dev", str(folder), *values)
        try:
            installation_id = dev.wait_for(r"^installed in acme: (\w+)$")[1]
            dev.wait_for(rf"^installation {installation_id} is {status}$")
            if status == "pending":
                dev.wait_for(r"^  configuration\.api_key: is required$")
            dev.wait_for(r"^watching ")
        finally:
            assert dev.stop() == 0
        configuration = Installation.objects.get(pk=installation_id).configuration
        assert configuration == ({"api_key": "k-1"} if values else {})
    # Published, but not installable where asked: said so, and the session goes on.
    dev = author.start("dev", str(tmp_path / "keyed"), "--organization", "nowhere")
    try:
        dev.wait_for(r"^keyed is unchanged: version 1 stays current$")
        dev.wait_for(r"^not installed: dev was refused \(404\); tried again at the next save$")
        dev.wait_for(r"^watching ")
    finally:
        assert dev.stop() == 0
