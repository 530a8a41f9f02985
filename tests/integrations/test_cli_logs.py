"""``docplatform-integration tail`` against a live server: its filters and follow mode, and
that it never shows another integration's lines, even with two integrations printing at
once through the real runtime host."""

import json
import re
import threading
from datetime import timedelta

import pytest
import requests
from django.utils import timezone

from docplatform.services import api_token_create
from integrations.gateway.log_store import CallRecord, integration_log_record
from integrations.services.installations import installation_create
from tests.factories import MembershipFactory, OrganizationFactory, SiteFactory
from tests.integrations.cli_support import Author
from tests.integrations.conftest import minimal_manifest

pytestmark = pytest.mark.django_db(transaction=True)


def printing_script(word: str) -> str:
    return (
        "from docplatform_sdk import Response, create_integration\n\n\n"
        "def fetch(request, context):\n"
        f"    print('{word} says', request.query.get('n'))\n"
        f"    return Response.json({{'from': '{word}'}})\n\n\n"
        "integration = create_integration(fetch=fetch)\n"
    )


@pytest.fixture
def author(tmp_path, live_server, org_admin):
    author = Author(tmp_path / "home")
    token = api_token_create(user=org_admin, name="laptop")[1]
    assert (
        author.run("login", "--api", live_server.url + "/api/v1", "--token", token).returncode == 0
    )
    return author


def log(version, installation, *, minutes_ago=0, **fields):
    record = {
        "kind": "fetch",
        "event": "",
        "request": "GET /",
        "outcome": "ok",
        "status": 200,
        "duration_ms": 3,
        "output": "",
        "error": "",
        **fields,
    }
    started = timezone.now() - timedelta(minutes=minutes_ago)
    return integration_log_record(
        CallRecord(version=version, installation=installation, started_at=started, **record)
    )


@pytest.mark.slow
def test_tail_filters(author, publish, org_admin, organization, tmp_path, live_server):
    hello = publish(org_admin, name="hello", scopes=["site:views:read"])
    version = hello.latest_version
    whole = installation_create(user=org_admin, integration=hello, organization=organization)
    site = installation_create(
        user=org_admin,
        integration=hello,
        organization=organization,
        site=SiteFactory(organization=organization),
    )
    log(version, whole, minutes_ago=120, output="two hours ago\n")
    log(version, whole, output="fetched\n")
    log(version, site, kind="event", event="site_view", request="", output="viewed\n")
    log(
        version,
        whole,
        outcome="error",
        status=500,
        output="",
        error='Traceback (most recent call last):\n  File "main.py", line 3\nValueError: no',
    )

    everything = author.run("tail", "hello", "--no-follow", "--since", "3h")
    assert everything.returncode == 0, everything.stderr
    lines = everything.stdout.splitlines()
    assert [line for line in lines if line.startswith("  | ")] == [
        "  | two hours ago",
        "  | fetched",
        "  | viewed",
    ]
    assert re.fullmatch(
        rf"\d\d:\d\d:\d\d fetch GET / error 500 3 ms v1 \[{whole.id}\]", lines[-4]
    ), lines
    assert lines[-3:] == [
        "  ! Traceback (most recent call last):",
        '  !   File "main.py", line 3',
        "  ! ValueError: no",
    ]

    recent = author.run("tail", "hello", "--no-follow", "--since", "15m").stdout
    assert "two hours ago" not in recent and "fetched" in recent
    latest = author.run("tail", "hello", "--no-follow").stdout  # the latest lines
    assert "two hours ago" in latest and "ValueError" in latest

    events = author.run("tail", "hello", "--no-follow", "--kind", "event").stdout
    assert "viewed" in events and "fetched" not in events
    assert " event site_view ok 200 3 ms v1 " in events
    errors = author.run("tail", "hello", "--no-follow", "--outcome", "error").stdout
    assert "ValueError" in errors and "fetched" not in errors
    one = author.run("tail", "hello", "--no-follow", "--installation", site.id).stdout
    assert "viewed" in one and "fetched" not in one
    by_installation = author.run("tail", "--installation", site.id, "--no-follow").stdout
    assert by_installation == one

    as_json = author.run("tail", "hello", "--no-follow", "--json", "--since", "1h").stdout
    items = [json.loads(line) for line in as_json.splitlines()]
    assert [item["output"] for item in items] == ["fetched\n", "viewed\n", ""]
    assert {item["integration"] for item in items} == {"hello"}

    # In the folder of the integration, NAME is the manifest's.
    folder = tmp_path / "home" / "hello"
    folder.mkdir()
    (folder / "service-manifest.yaml").write_text("name: hello\n")
    in_folder = Author(author.home, cwd=folder).run("tail", "--no-follow", "--since", "3h")
    assert in_folder.stdout == everything.stdout

    for arguments, code, message in [
        (["tail", "hello", "--since", "yesterday"], 2, "--since yesterday: give a duration"),
        (["tail", "hello", "--kind", "nap"], 2, "invalid choice"),
        (["tail", "--no-follow"], 2, "give the integration's NAME or --installation ID"),
        (["tail", "nothing-here", "--no-follow"], 1, "tail was refused (404)"),
        (["tail", "hello", "--installation", "nope", "--no-follow"], 1, "tail was refused (400)"),
    ]:
        done = author.run(*arguments)
        assert (done.returncode, message in done.stderr) == (code, True), (arguments, done)


@pytest.mark.slow
def test_an_installing_admin_tails_their_installation_only(
    author, publish, org_admin, tmp_path, live_server
):
    hello = publish(org_admin, name="hello", visibility="public", approved=True)
    other = OrganizationFactory(subdomain="other")
    their_admin = MembershipFactory(organization=other, role="admin").user
    theirs = installation_create(user=their_admin, integration=hello, organization=other)
    ours = installation_create(
        user=org_admin, integration=hello, organization=org_admin.memberships.get().organization
    )
    log(hello.latest_version, theirs, output="for other\n")
    log(hello.latest_version, ours, output="for acme\n")

    them = Author(tmp_path / "them")
    token = api_token_create(user=their_admin, name="t")[1]
    api = ["--api", live_server.url + "/api/v1", "--token", token]
    mine = them.run("tail", "--installation", theirs.id, "--no-follow", *api)
    assert mine.returncode == 0, mine.stderr
    assert "for other" in mine.stdout and "for acme" not in mine.stdout
    assert them.run("tail", "hello", "--no-follow", *api).returncode == 1  # not an owner
    assert them.run("tail", "--installation", ours.id, "--no-follow", *api).returncode == 1


@pytest.mark.slow
@pytest.mark.usefixtures("celery_worker")
def test_two_integrations_printing_at_once_never_mix(
    author, runtime, write_integration, org_admin, organization
):
    endpoints = {}
    for word in ("alpha", "beta"):
        folder = write_integration(
            minimal_manifest(name=word, script="main.py", scopes=[]),
            files={"main.py": printing_script(word)},
            folder=word,
        )
        assert author.run("publish", str(folder)).returncode == 0
        done = author.run("install", word, "--organization", "acme", "--json")
        assert done.returncode == 0, done.stderr
        endpoints[word] = json.loads(done.stdout)["publicEndpoint"]

    following = author.start("tail", "alpha", "--since", "1m")
    try:
        calls = 8

        def hit(word):
            for n in range(calls):
                answer = requests.get(f"{endpoints[word]}/?n={n}", timeout=30)
                assert answer.json() == {"from": word}

        threads = [threading.Thread(target=hit, args=(word,)) for word in endpoints]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        for n in range(calls):
            following.wait_for(rf"^  \| alpha says {n}$")
    finally:
        assert following.stop() == 0
    assert not [line for line in following.seen if "beta" in line]

    for word, other in (("alpha", "beta"), ("beta", "alpha")):
        shown = author.run("tail", word, "--no-follow", "--since", "5m").stdout
        printed = re.findall(r"^  \| (\w+) says (\d+)$", shown, re.M)
        assert sorted(printed, key=lambda pair: int(pair[1])) == [
            (word, str(n)) for n in range(calls)
        ], shown
        assert other not in shown
