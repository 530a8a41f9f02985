"""The development channel and rollback from the author's command line, through real
processes (the console script, a live server, the runtime host): ``dev`` on an integration
another organization installed leaves that installation on the released version while the
author's own runs the development one (asked of the code itself through each public
endpoint, and of the API); ``rollback`` releases an older version again and the
installations are re-validated; publishing an older version's code is refused, naming it."""

import json

import pytest
import requests

from docplatform.services import api_token_create
from integrations.environment import installation_public_endpoint
from integrations.models import Installation, Integration
from integrations.services.installations import installation_create
from tests.factories import MembershipFactory, OrganizationFactory, SpaceFactory
from tests.integrations.cli_support import Author
from tests.integrations.conftest import listing_approve, minimal_manifest

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]

NEEDS_A_KEY = {
    "account": {
        "properties": {"api_key": {"type": "string", "title": "Key", "description": "d"}},
        "required": ["api_key"],
    }
}


def script(mark: str) -> str:
    """Code whose public endpoint answers which code it is."""
    return (
        "from docplatform_sdk import Response, create_integration\n\n"
        f"MARK = {mark!r}\n"
        "integration = create_integration(\n"
        "    fetch=lambda request, context: Response.json({'mark': MARK}),\n"
        ")\n"
    )


def mark_of(installation: Installation) -> str:
    """What the code running for ``installation`` answers on its public endpoint."""
    answer = requests.get(installation_public_endpoint(installation) + "/", timeout=20)
    assert answer.status_code == 200, answer.text
    return answer.json()["mark"]


@pytest.fixture
def author(tmp_path, live_server, org_admin):
    author = Author(tmp_path / "home")
    token = api_token_create(user=org_admin, name="laptop")[1]
    done = author.run("login", "--api", live_server.url + "/api/v1", "--token", token)
    assert done.returncode == 0, done.stderr
    return author


@pytest.fixture
def hello(write_integration):
    """The integration folder; ``hello(mark, **manifest)`` writes it anew."""

    def write(mark: str, **fields):
        manifest = minimal_manifest(script="main.py", network={"fetch": []}, **fields)
        return write_integration(manifest, files={"main.py": script(mark)}, folder="hello")

    return write


def api_version(live_server, user, installation: Installation) -> dict:
    token = api_token_create(user=user, name="reader")[1]
    answer = requests.get(
        f"{live_server.url}/api/v1/installations/{installation.pk}/",
        headers={"Authorization": f"Bearer {token}"},
        timeout=20,
    )
    assert answer.status_code == 200, answer.text
    return answer.json()["version"]


def test_dev_runs_for_the_authors_installation_only(runtime, live_server, author, hello, org_admin):
    folder = hello("released")
    assert author.run("publish", str(folder)).stdout == "published hello version 1\n"
    globex_admin = MembershipFactory(
        organization=OrganizationFactory(subdomain="globex"), role="admin"
    ).user
    theirs = installation_create(
        user=globex_admin,
        integration=listing_approve(Integration.objects.get(name="hello")),
        organization=globex_admin.memberships.get().organization,
    )

    dev = author.start("dev", str(folder))
    try:
        dev.wait_for(r"^hello is unchanged: version 1 stays current$")
        ours = dev.wait_for(r"^installed in acme: (\w+)$")[1]
        dev.wait_for(rf"^installation {ours} runs development versions$")
        dev.wait_for(r"^watching ")
        (folder / "main.py").write_text(script("in development"))
        dev.wait_for(
            r"^published hello development version 2: development installations run it, "
            r"the others version 1$"
        )
        ours = Installation.objects.get(pk=ours)
        assert mark_of(ours) == "in development"
        assert mark_of(theirs) == "released"
        assert api_version(live_server, org_admin, ours) == {"number": 2, "development": True}
        assert api_version(live_server, globex_admin, theirs) == {
            "number": 1,
            "development": False,
        }
    finally:
        assert dev.stop() == 0

    released = author.run("publish", str(folder))
    assert released.stdout == "published hello version 3\n", released.stderr
    assert (mark_of(ours), mark_of(theirs)) == ("in development", "in development")
    assert api_version(live_server, globex_admin, theirs) == {"number": 3, "development": False}


def test_rollback_releases_an_older_version_and_installations_revalidate(
    runtime, author, hello, tmp_path, live_server, organization
):
    folder = hello("one")
    assert author.run("publish", str(folder)).returncode == 0
    hello("two")
    assert author.run("publish", str(folder)).stdout == "published hello version 2\n"
    installed = author.run("install", "hello", "--organization", "acme")
    assert installed.returncode == 0, installed.stderr
    installation = Installation.objects.get()
    hello("three", configurations=NEEDS_A_KEY)
    assert author.run("publish", str(folder)).stdout == "published hello version 3\n"
    installation.refresh_from_db()
    assert installation.status == "pending"  # version 3 needs a key it does not have

    hello("two")
    again = author.run("publish", str(folder))
    assert again.returncode == 1
    assert again.stdout == (
        "version: this code is version 2's: run `docplatform-integration rollback 2` to make "
        "it current again\n"
    )
    assert "publish was refused (400)" in again.stderr
    assert mark_of(installation) == "three"  # never switched silently

    in_folder = Author(author.home, cwd=folder)
    rollback = in_folder.run("rollback", "2")
    assert rollback.returncode == 0, rollback.stdout + rollback.stderr
    assert rollback.stdout.splitlines() == [
        "released hello version 2 again: every installation runs it (it was version 3)",
        "1 installation(s) changed when checked against version 2",
    ]
    installation.refresh_from_db()
    assert (installation.status, installation.status_reasons) == ("active", [])
    assert mark_of(installation) == "two"
    assert (
        author.run("publish", str(folder)).stdout == "hello is unchanged: version 2 stays current\n"
    )

    current = author.run("rollback", "2", "--name", "hello", "--json")
    assert json.loads(current.stdout)["released"] is False
    assert author.run("rollback", "2", str(folder)).stdout == (
        "hello version 2 is current already: nothing changed\n"
    )
    missing = author.run("rollback", "7", str(folder))
    assert (missing.returncode, missing.stdout) == (1, "version: hello has no version 7\n")
    assert author.run("rollback", "two", str(folder)).returncode == 2
    nowhere = author.run("rollback", "2", str(tmp_path / "empty-does-not-exist"))
    assert nowhere.returncode == 2

    member = MembershipFactory(organization=organization, role="member").user
    token = api_token_create(user=member, name="member")[1]
    other = Author(tmp_path / "member")
    refused = other.run(
        "rollback", "1", "--name", "hello", "--api", live_server.url + "/api/v1", "--token", token
    )
    assert refused.returncode == 1
    assert refused.stdout == "Only the organization's admins may publish its integrations.\n"
    assert Integration.objects.get(name="hello").released_version.number == 2


def test_dev_into_a_space_marks_that_installation_only(runtime, author, hello, organization):
    space = SpaceFactory(organization=organization)
    folder = hello("released")
    assert author.run("publish", str(folder)).returncode == 0
    dev = author.start("dev", str(folder), "--space", space.pk)
    try:
        in_space = dev.wait_for(rf"^installed in space {space.pk}: (\w+)$")[1]
        dev.wait_for(rf"^installation {in_space} runs development versions$")
        dev.wait_for(r"^watching ")
        (folder / "main.py").write_text(script("in development"))
        dev.wait_for(r"^published hello development version 2: ")
    finally:
        assert dev.stop() == 0
    in_space = Installation.objects.get(pk=in_space)
    organization_wide = in_space.parent
    assert (in_space.development, organization_wide.development) == (True, False)
    assert mark_of(in_space) == "in development"
    assert mark_of(organization_wide) == "released"
