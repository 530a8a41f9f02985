"""``docplatform-integration install`` and ``unpublish`` against a live server: typed
configuration values, the three levels, and unpublishing refused while installations run
the version."""

import json

import pytest
import yaml
from docplatform_sdk.cli.installing import CONFIGURATION_LEVELS

from docplatform.services import api_token_create
from integrations.environment import installation_public_endpoint
from integrations.models import Installation, Integration, IntegrationVersion
from integrations.operators import OPERATOR
from integrations.services.installations import installation_uninstall
from tests.factories import MembershipFactory, OrganizationFactory, SiteFactory, SpaceFactory
from tests.integrations.cli_support import Author
from tests.integrations.conftest import minimal_manifest

pytestmark = pytest.mark.django_db(transaction=True)

SCRIPT = "from docplatform_sdk import create_integration\nintegration = create_integration()\n"
SITE_CONFIGURATION = {
    "site": {
        "properties": {
            "tracking_id": {"type": "string", "title": "T", "description": "d"},
            "rate": {"type": "number", "title": "R", "description": "d"},
            "anonymize": {"type": "boolean", "title": "A", "description": "d"},
        },
        "required": ["tracking_id"],
    }
}


@pytest.fixture
def author(tmp_path, live_server, org_admin):
    author = Author(tmp_path / "home")
    token = api_token_create(user=org_admin, name="laptop")[1]
    done = author.run("login", "--api", live_server.url + "/api/v1", "--token", token)
    assert done.returncode == 0, done.stderr
    return author


def published(author, write_integration, **fields):
    manifest = minimal_manifest(script="main.py", network={"fetch": []}, **fields)
    folder = write_integration(manifest, files={"main.py": SCRIPT}, folder=manifest["name"])
    done = author.run("publish", str(folder), "--json")
    assert done.returncode == 0, done.stdout + done.stderr
    return folder, json.loads(done.stdout)


@pytest.mark.slow
def test_install_at_each_level_with_typed_values(author, write_integration, organization):
    _, answer = published(
        author, write_integration, name="analytics", configurations=SITE_CONFIGURATION
    )
    assert (answer["integration"], answer["version"]["number"]) == ("analytics", 1)

    organization_level = author.run("install", "analytics", "--organization", "acme")
    assert organization_level.returncode == 0, organization_level.stderr
    parent = Installation.objects.get(level="organization")
    assert organization_level.stdout.splitlines() == [
        f"{parent.id} active",
        f"public endpoint: {installation_public_endpoint(parent)}",
    ]

    site = SiteFactory(organization=organization)
    site_level = author.run(
        "install", "analytics", "--site", site.id, "--set", "rate=12.5", "--set", "anonymize=yes"
    )
    assert site_level.returncode == 0, site_level.stderr
    installation = Installation.objects.get(level="site")
    assert site_level.stdout.splitlines()[:2] == [
        f"{installation.id} pending",
        "  configuration.tracking_id: is required",
    ]
    assert installation.configuration == {"rate": 12.5, "anonymize": True}

    space = SpaceFactory(organization=organization)
    space_level = author.run(
        "install", "analytics", "--space", space.id, "--set", "tracking_id=UA-1", "--json"
    )
    assert space_level.returncode == 0, space_level.stderr
    shown = json.loads(space_level.stdout)
    assert (shown["level"], shown["status"], shown["space"]) == ("space", "active", space.id)
    assert shown["configuration"] == {"tracking_id": "UA-1"}


@pytest.mark.slow
def test_install_refusals_name_the_field(author, write_integration, organization, outsider):
    published(author, write_integration, name="analytics", configurations=SITE_CONFIGURATION)
    site = SiteFactory(organization=organization)

    not_a_number = author.run("install", "analytics", "--site", site.id, "--set", "rate=fast")
    assert not_a_number.returncode == 1
    assert not_a_number.stdout == "configuration.rate: 'fast' is not a number\n"
    assert "install was refused" in not_a_number.stderr

    twice = author.run("install", "analytics", "--organization", "acme")
    assert twice.returncode == 0
    again = author.run("install", "analytics", "--organization", "acme")
    assert again.returncode == 1
    assert "install was refused (400)" in again.stderr
    assert again.stdout.strip()  # the API's reason, as it words it

    elsewhere = OrganizationFactory(subdomain="elsewhere")
    not_a_member = author.run("install", "analytics", "--organization", elsewhere.subdomain)
    assert not_a_member.returncode == 1
    assert "install was refused (404)" in not_a_member.stderr

    unknown = author.run("install", "no-such-thing", "--organization", "acme")
    assert unknown.returncode == 1

    for arguments in (
        ["install", "analytics"],  # where?
        ["install", "analytics", "--organization", "acme", "--site", site.id],
        ["install", "analytics", "--site", site.id, "--set", "novalue"],
    ):
        assert author.run(*arguments).returncode == 2, arguments
    assert Installation.objects.count() == 1


@pytest.mark.slow
def test_unpublish_a_version_or_the_integration_never_what_installations_run(
    author, write_integration, organization
):
    folder, _ = published(author, write_integration, name="hello")
    manifest = yaml.safe_load((folder / "service-manifest.yaml").read_text())
    manifest["description"] = "Says hello, twice."
    (folder / "service-manifest.yaml").write_text(yaml.safe_dump(manifest))
    assert author.run("publish", str(folder)).stdout == "published hello version 2\n"
    installed = author.run("install", "hello", "--organization", "acme")
    assert installed.returncode == 0, installed.stderr
    installation = Installation.objects.get()

    whole = author.run("unpublish", "hello")
    assert whole.returncode == 1
    assert whole.stdout == (
        f"integration: hello is installed: {installation.id} (acme, organization); "
        "uninstall it first\n"
    )
    running = author.run("unpublish", "hello", "--version", "2")
    assert running.returncode == 1
    assert running.stdout.startswith(
        f"version: version 2 is one installations run: {installation.id} (acme, organization)"
    )
    older = author.run("unpublish", "hello", "--version", "1", "--json")
    assert older.returncode == 0, older.stderr
    assert json.loads(older.stdout) == {"integration": "hello", "version": 1, "unpublished": True}
    assert list(
        IntegrationVersion.objects.filter(integration__name="hello").values_list(
            "number", flat=True
        )
    ) == [2]

    missing = author.run("unpublish", "hello", "--version", "7")
    assert (missing.returncode, missing.stdout) == (1, "version: hello has no version 7\n")
    assert author.run("unpublish", "hello", "--version", "0").returncode == 2

    installation_uninstall(user=OPERATOR, installation=installation)
    only = author.run("unpublish", "hello", "--version", "2")
    assert only.returncode == 1
    assert only.stdout == "version: version 2 is the only one: unpublish hello\n"
    gone = author.run("unpublish", "hello")
    assert (gone.returncode, gone.stdout) == (0, "unpublished hello: every version is removed\n")
    assert not Integration.objects.filter(name="hello").exists()
    assert author.run("unpublish", "hello").returncode == 1  # 404 now


@pytest.mark.slow
def test_the_latest_version_falls_back_when_removed_uninstalled(author, write_integration):
    folder, _ = published(author, write_integration, name="hello")
    (folder / "main.py").write_text(SCRIPT + "# two\n")
    assert author.run("publish", str(folder)).returncode == 0
    assert author.run("unpublish", "hello", "--version", "2").returncode == 0
    integration = Integration.objects.get(name="hello")
    assert integration.latest_version.number == 1
    assert integration.versions.count() == 1


@pytest.mark.slow
def test_only_the_owning_admins_unpublish(
    author, write_integration, organization, tmp_path, live_server
):
    published(author, write_integration, name="hello")
    member = MembershipFactory(organization=organization, role="member").user
    other = Author(tmp_path / "member")
    token = api_token_create(user=member, name="member")[1]
    refused = other.run(
        "unpublish", "hello", "--api", live_server.url + "/api/v1", "--token", token
    )
    assert refused.returncode == 1
    assert refused.stdout == "Only the organization's admins may publish its integrations.\n"
    assert Integration.objects.filter(name="hello").exists()


def test_the_console_script_reads_each_level_with_the_platforms_configuration():
    assert CONFIGURATION_LEVELS == Installation.CONFIGURATION_LEVELS
