"""The integration token (``environment.apiTokens.integration``, ``dpn_…``): the integration
itself, acting on every installation of it, each within that installation's granted scopes.

Through the real runtime host: code behind the integration-level public endpoint
(``/integrations/<name>/…``, no installation) gets the token and calls the platform with it
(``context.integration_api``). Then the token's rules through the API: its installations, the
spaces they reach with the scope a request uses, 403 for a scope no installation of it holds,
404 for what none reaches (another integration's, an organization without it), 401 for an
unknown token and for the token of a version that no longer runs (rotation)."""

import textwrap

import pytest
import requests
from django.db import connection

from docplatform.models import hash_token
from docplatform.services import api_token_create
from integrations.environment import integration_public_endpoint
from integrations.models import IntegrationVersion
from integrations.operators import OPERATOR
from integrations.services import integration_publish_folder
from integrations.services.installations import installation_create, installation_pause
from tests.api_helpers import API, api_client
from tests.factories import (
    IntegrationFactory,
    MembershipFactory,
    OrganizationFactory,
    PageFactory,
    RevisionFactory,
    SiteFactory,
    SpaceFactory,
)
from tests.integrations.conftest import listing_approve, minimal_manifest

pytestmark = pytest.mark.django_db

SCRIPT = textwrap.dedent(
    """
    from docplatform_sdk import Response, create_integration
    from docplatform_sdk.context import PlatformAPIError

    WORD = "{word}"

    def fetch(request, context):
        api = context.integration_api
        if request.route == "/token":
            tokens = context.environment.apiTokens
            return Response.json({{"integration": tokens.get("integration"),
                                   "installation": tokens.get("installation"), "word": WORD}})
        if request.route == "/installations":
            return Response.json([row["id"] for row in api.installations()])
        try:
            return Response.json(api.get(request.route))
        except PlatformAPIError as error:
            return Response.json({{"refused": error.status}})

    integration = create_integration(fetch=fetch)
    """
)


def space_with_a_page(organization):
    space = SpaceFactory(organization=organization)
    revision = RevisionFactory(space=space)
    PageFactory(revision=revision, path="intro")
    space.current_revision = revision
    space.save()
    return space


@pytest.fixture
def world(write_integration, org_admin, organization):
    """roamer v1 (space:content:read) installed by globex in one space; v2 asks for
    space:metadata:read too, installed by acme in one space (globex has not approved it); a
    third organization, initech, has no installation of it; another integration is installed
    in an acme space of its own."""

    def publish(word: str, scopes: list[str]):
        root = write_integration(
            minimal_manifest(name="roamer", script="main.py", scopes=scopes),
            files={"main.py": SCRIPT.format(word=word)},
            folder=f"roamer-{word}",
        )
        return integration_publish_folder(path=root, publisher=org_admin).version

    first = publish("one", ["space:content:read"])
    listing_approve(first.integration)  # listed for other organizations by an operator
    globex = OrganizationFactory(subdomain="globex", title="Globex")
    globex_admin = MembershipFactory(organization=globex, role="admin").user
    globex_space = space_with_a_page(globex)
    in_globex = installation_create(
        user=globex_admin, integration=first.integration, organization=globex, space=globex_space
    )
    second = publish("two", ["space:content:read", "space:metadata:read"])
    acme_space = space_with_a_page(organization)
    in_acme = installation_create(
        user=org_admin, integration=second.integration, organization=organization, space=acme_space
    )
    initech_space = space_with_a_page(OrganizationFactory(subdomain="initech", title="Initech"))
    other = IntegrationFactory(name="other", organization=organization)
    other_space = space_with_a_page(organization)
    in_other = installation_create(
        user=org_admin, integration=other, organization=organization, space=other_space
    )
    return {
        "first": first,
        "second": second,
        "publish": publish,
        "in_globex": in_globex,
        "in_acme": in_acme,
        "in_other": in_other,
        "globex_space": globex_space,
        "acme_space": acme_space,
        "initech_space": initech_space,
        "other_space": other_space,
    }


def installation_ids(world) -> set[str]:
    ids = set()
    for name in ("in_globex", "in_acme"):
        ids |= {world[name].pk, world[name].parent_id}
    return ids


@pytest.mark.slow
@pytest.mark.usefixtures("transactional_db")
def test_code_behind_the_integration_endpoint_calls_the_platform_with_it(runtime, world):
    integration = world["second"].integration
    endpoint = integration_public_endpoint(integration)

    token = requests.get(endpoint + "/token", timeout=30).json()
    assert token["word"] == "two" and token["installation"] is None  # no installation here
    assert token["integration"].startswith("dpn_")
    assert hash_token(token["integration"]) == world["second"].api_token_hash

    listed = requests.get(endpoint + "/installations", timeout=30).json()
    assert set(listed) == installation_ids(world)  # both organizations', nobody else's
    pages = requests.get(endpoint + f"/spaces/{world['globex_space'].pk}/pages/", timeout=30)
    assert pages.json()["count"] == 1
    refused = requests.get(endpoint + f"/spaces/{world['initech_space'].pk}/pages/", timeout=30)
    assert refused.json() == {"refused": 404}

    # A new version: a new token in the envelope, the old one refused from then on.
    third = world["publish"]("three", ["space:content:read", "space:metadata:read"])
    token_now = requests.get(endpoint + "/token", timeout=30).json()
    assert token_now["word"] == "three"
    assert hash_token(token_now["integration"]) == third.api_token_hash
    assert token_now["integration"] != token["integration"]
    old = api_client(token=token["integration"]).get(f"{API}/integration/installations/")
    assert old.status_code == 401
    assert "no longer runs" in old.json()["errors"][0]["detail"]


def test_it_lists_and_reads_the_integrations_installations_only(world):
    client = api_client(token=world["second"].api_token)
    listed = client.get(f"{API}/integration/installations/")
    assert listed.status_code == 200
    assert {row["id"] for row in listed.json()} == installation_ids(world)
    assert world["in_other"].pk not in {row["id"] for row in listed.json()}
    # It manages no installation: that is for the installing organizations' admins.
    paused = client.post(f"{API}/installations/{world['in_acme'].pk}/pause/")
    assert paused.status_code == 403


def test_it_acts_on_each_installation_within_that_installations_scopes(world):
    client = api_client(token=world["second"].api_token)
    # space:content:read: granted to both installations, each reaching its space.
    for name in ("acme_space", "globex_space"):
        pages = client.get(f"{API}/spaces/{world[name].pk}/pages/")
        assert pages.status_code == 200 and pages.json()["count"] == 1
    # space:metadata:read: acme's installation has it, globex's awaits approval.
    assert client.get(f"{API}/spaces/{world['acme_space'].pk}/").status_code == 200
    assert client.get(f"{API}/spaces/{world['globex_space'].pk}/").status_code == 404
    # Outside every installation of it: another integration's space, an organization without it.
    for name in ("other_space", "initech_space"):
        assert client.get(f"{API}/spaces/{world[name].pk}/pages/").status_code == 404
    # A scope no installation of it holds: 403 naming it.
    site = SiteFactory(organization=world["acme_space"].organization)
    site.spaces.add(world["acme_space"])
    refused = client.get(f"{API}/sites/{site.pk}/")
    assert refused.status_code == 403
    assert refused.json()["errors"][0]["detail"] == (
        "No installation of roamer has the scope site:metadata:read."
    )
    # Writes need their scope too.
    written = client.post(
        f"{API}/spaces/{world['acme_space'].pk}/revisions/",
        {"message": "x", "pages": [{"path": "x", "title": "X"}]},
    )
    assert written.status_code == 403
    # People's endpoints refuse it.
    events = client.get(f"{API}/orgs/{world['acme_space'].organization.subdomain}/events/")
    assert events.status_code == 403


def test_a_paused_installation_is_out_of_its_reach(world):
    client = api_client(token=world["second"].api_token)
    # Paused, globex's organization installation takes its space installation along.
    installation_pause(user=OPERATOR, installation=world["in_globex"].parent)
    assert client.get(f"{API}/spaces/{world['globex_space'].pk}/pages/").status_code == 404
    listed = {row["id"] for row in client.get(f"{API}/integration/installations/").json()}
    assert listed == {world["in_acme"].pk, world["in_acme"].parent_id}


def test_unknown_tokens_and_other_callers(world, org_admin):
    unknown = api_client(token="dpn_" + "x" * 43).get(f"{API}/integration/installations/")
    assert unknown.status_code == 401
    # The first version's token stopped working when the second was released.
    old = api_client(token=world["first"].api_token).get(f"{API}/integration/installations/")
    assert old.status_code == 401
    personal = api_token_create(user=org_admin, name="laptop")[1]
    assert api_client(token=personal).get(f"{API}/integration/installations/").status_code == 403
    installation = world["in_acme"]
    assert (
        api_client(token=installation.api_token)
        .get(f"{API}/integration/installations/")
        .status_code
        == 403
    )


def test_the_token_is_kept_only_as_hash_and_ciphertext(world):
    version = IntegrationVersion.objects.get(pk=world["second"].pk)
    raw = version.api_token
    assert raw.startswith("dpn_") and hash_token(raw) == version.api_token_hash
    with connection.cursor() as cursor:
        cursor.execute("SELECT api_token, api_token_hash FROM integrations_integrationversion")
        stored = cursor.fetchall()
    assert raw not in repr(stored)
    assert len({row[1] for row in stored}) == len(stored)  # one token per version


@pytest.mark.slow
@pytest.mark.django_db(transaction=True)
def test_the_migration_gives_each_existing_version_a_token_of_its_own(migrate_to):
    before = [
        ("integrations", "0012_release_channel"),
        ("docplatform", "0015_change_request_comments"),
    ]
    old = migrate_to(before)
    organization = old.get_model("docplatform", "Organization").objects.create(
        id="o1", subdomain="old", title="Old"
    )
    integration = old.get_model("integrations", "Integration").objects.create(
        id="i1", name="old", organization=organization, title="Old", description="Now."
    )
    for number in (1, 2):
        old.get_model("integrations", "IntegrationVersion").objects.create(
            id=f"v{number}",
            integration=integration,
            number=number,
            content_hash=f"{number:064x}",
            manifest={"name": "old"},
        )
    migrate_to([("integrations", "0013_integration_token")])
    tokens = dict(
        IntegrationVersion.objects.filter(integration_id="i1").values_list("pk", "api_token_hash")
    )
    assert set(tokens) == {"v1", "v2"} and len(set(tokens.values())) == 2
    for version in IntegrationVersion.objects.filter(integration_id="i1").only(
        "api_token", "api_token_hash"
    ):
        assert version.api_token.startswith("dpn_")
        assert hash_token(version.api_token) == version.api_token_hash


def test_it_posts_conversations_and_reads_openapi_where_an_installation_holds_the_scope(
    write_integration, org_admin, organization
):
    """The organization-level doors (conversations, OpenAPI documents) take it through its
    installation in that organization holding the scope; elsewhere, nothing."""
    root = write_integration(
        minimal_manifest(
            name="helpdesk", script="main.py", scopes=["conversations:ingest", "openapi:read"]
        ),
        files={"main.py": SCRIPT.format(word="desk")},
        folder="helpdesk",
    )
    version = integration_publish_folder(path=root, publisher=org_admin).version
    installation = installation_create(
        user=org_admin, integration=version.integration, organization=organization
    )
    OrganizationFactory(subdomain="initech", title="Initech")
    client = api_client(token=version.api_token)
    thread = {
        "externalId": "ticket-1",
        "subject": "Where is the export?",
        "messages": [{"role": "user", "text": "Where?", "time": "2026-03-01T09:30:00Z"}],
    }

    posted = client.post(f"{API}/orgs/acme/conversations/", thread, format="json")
    assert posted.status_code == 201, posted.json()
    assert posted.json()["installation"] == installation.pk
    assert client.get(f"{API}/orgs/acme/openapi/").status_code == 200
    elsewhere = client.post(f"{API}/orgs/initech/conversations/", thread, format="json")
    assert elsewhere.status_code == 404
    assert client.get(f"{API}/orgs/initech/openapi/").status_code == 404
    # openapi:write is no scope of its: 403 naming it.
    published = client.post(
        f"{API}/orgs/acme/openapi/", {"name": "x", "content": "{}"}, format="json"
    )
    assert published.status_code == 403
