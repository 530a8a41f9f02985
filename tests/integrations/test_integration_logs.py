"""Integration logs through real parts: a Celery worker delivering events to a runtime host
whose workers print, the public endpoint relaying fetches, components rendered; each call is
one line of its integration's log, read through the API by the integration's owners and by
the installing organization's admins, never by anyone else."""

import textwrap

import pytest
import requests

from docplatform.revisions import space_content_update
from integrations.environment import installation_public_endpoint
from integrations.gateway.failures import IntegrationFault
from integrations.models import IntegrationLog
from integrations.services import integration_publish_folder
from integrations.services.completion import completion_options
from integrations.services.components import component_render
from integrations.services.installations import installation_create
from tests.api_helpers import API, NOT_FOUND, api_client
from tests.conftest import wait_until
from tests.factories import MembershipFactory, OrganizationFactory, SpaceFactory, UserFactory
from tests.integrations.conftest import listing_approve, minimal_manifest

pytestmark = pytest.mark.usefixtures("celery_worker")

SCRIPT = """
import sys
from docplatform_sdk import Response, create_component, create_integration, markup

WORD = "{word}"


def on_content_updated(event, context):
    for number in range(20):
        print(WORD, "line", number, "of revision", event["revisionId"])
    print(WORD, "done", file=sys.stderr)


def fetch(request, context):
    print(WORD, "fetched", request.method, request.route)
    if request.route == "/boom":
        explode()
    return Response.json({{"word": WORD}}, status=201)


def explode():
    raise ValueError(WORD + " exploded")


def render(element, context):
    print(WORD, "rendering")
    return markup.block(markup.text("hello"))


def render_nonsense(element, context):
    print(WORD, "rendering nonsense")
    return {{"type": "nonsense"}}


integration = create_integration(
    fetch=fetch,
    events={{"space_content_updated": on_content_updated}},
    components=[
        create_component("card", render=render),
        create_component("broken", render=render_nonsense),
    ],
)
"""


def publish_scripted(write_integration, publisher, name, organization, **manifest):
    fields = {
        "name": name,
        "organization": organization,
        "script": "main.py",
        "blocks": [{"id": "card", "title": "Card", "description": "A card."}],
        **manifest,
    }
    root = write_integration(
        minimal_manifest(**fields),
        files={"main.py": textwrap.dedent(SCRIPT.format(word=name))},
        folder=name,
    )
    return integration_publish_folder(path=root, publisher=publisher).version.integration


@pytest.fixture
def world(write_integration, organization, org_admin):
    """alpha (owned by acme) and beta (owned by globex), both installed into an acme space;
    beta also into a globex space."""
    globex = OrganizationFactory(subdomain="globex")
    globex_admin = MembershipFactory(organization=globex, role="admin").user
    alpha = publish_scripted(write_integration, org_admin, "alpha", "acme")
    beta = listing_approve(publish_scripted(write_integration, globex_admin, "beta", "globex"))
    space = SpaceFactory(organization=organization)
    installed = {
        name: installation_create(
            user=org_admin, integration=integration, organization=organization, space=space
        )
        for name, integration in (("alpha", alpha), ("beta", beta))
    }
    globex_space = SpaceFactory(organization=globex)
    installed["beta-at-globex"] = installation_create(
        user=globex_admin, integration=beta, organization=globex, space=globex_space
    )
    return {
        "space": space,
        "globex_space": globex_space,
        "globex_admin": globex_admin,
        "installed": installed,
        "alpha": alpha,
        "beta": beta,
    }


def logs(user, url, **params) -> dict:
    answer = api_client(user).get(url, params)
    assert answer.status_code == 200, answer.json()
    return answer.json()


def content_updates(page: dict) -> list[dict]:
    """The lines of space_content_updated deliveries (setup events are logged too)."""
    return [item for item in page["items"] if item["event"] == "space_content_updated"]


def line_of(code: str) -> int:
    """The line of ``code`` in main.py."""
    lines = textwrap.dedent(SCRIPT).splitlines()
    return next(number for number, line in enumerate(lines, 1) if line.strip() == code)


def event_lines(integration, **filters):
    return IntegrationLog.objects.filter(
        integration=integration, kind="event", event="space_content_updated", **filters
    )


@pytest.mark.slow
def test_two_integrations_printing_at_once_each_see_only_their_own_lines(runtime, world, org_admin):
    revision = space_content_update(space=world["space"], pages=[{"path": "p", "title": "P"}])
    space_content_update(space=world["globex_space"], pages=[{"path": "q", "title": "Q"}])
    wait_until(lambda: event_lines(world["alpha"]).count() == 1, timeout=30)
    wait_until(lambda: event_lines(world["beta"]).count() == 2, timeout=30)
    alpha = content_updates(logs(org_admin, f"{API}/integrations/alpha/logs/", kind="event"))
    assert len(alpha) == 1
    line = alpha[0]
    assert line["integration"] == "alpha"
    assert line["installationId"] == world["installed"]["alpha"].pk
    assert (line["event"], line["outcome"], line["status"]) == ("space_content_updated", "ok", 200)
    assert line["version"] == 1 and line["durationMs"] >= 0 and line["error"] is None
    assert line["output"] == "".join(
        f"alpha line {n} of revision {revision.id}\n" for n in range(20)
    ) + ("alpha done\n")
    # beta's owners see both of beta's installations, and no alpha line.
    beta = content_updates(logs(world["globex_admin"], f"{API}/integrations/beta/logs/"))
    assert {item["installationId"] for item in beta} == {
        world["installed"]["beta"].pk,
        world["installed"]["beta-at-globex"].pk,
    }
    for item in beta:
        assert "alpha" not in item["output"] and item["output"].endswith("beta done\n")
    # acme's admin reads its installation of beta, not globex's.
    acme_beta = world["installed"]["beta"]
    mine = content_updates(logs(org_admin, f"{API}/installations/{acme_beta.pk}/logs/"))
    assert [item["installationId"] for item in mine] == [acme_beta.pk]
    theirs = api_client(org_admin).get(
        f"{API}/installations/{world['installed']['beta-at-globex'].pk}/logs/"
    )
    assert (theirs.status_code, theirs.json()) == (404, NOT_FOUND)
    # acme's admin is no owner of beta: its whole log, another organization's, is not there.
    whole = api_client(org_admin).get(f"{API}/integrations/beta/logs/")
    assert (whole.status_code, whole.json()) == (404, NOT_FOUND)
    stranger = api_client(UserFactory()).get(f"{API}/installations/{acme_beta.pk}/logs/")
    assert (stranger.status_code, stranger.json()) == (404, NOT_FOUND)


def test_a_fetch_is_logged_with_its_status_and_request_line(runtime, world, org_admin):
    installation = world["installed"]["alpha"]
    answer = requests.post(
        installation_public_endpoint(installation) + "/hooks/github?secret=s3cr3t",
        data=b"{}",
        timeout=20,
    )
    assert answer.status_code == 201
    assert "X-Runtime-Output" not in answer.headers and "X-Runtime-Error" not in answer.headers
    items = logs(org_admin, f"{API}/installations/{installation.pk}/logs/", kind="fetch")["items"]
    assert len(items) == 1
    item = items[0]
    assert (item["kind"], item["request"], item["status"], item["outcome"]) == (
        "fetch",
        "POST /hooks/github",
        201,
        "ok",
    )
    assert item["event"] is None
    assert item["output"] == "alpha fetched POST /hooks/github\n"
    assert "s3cr3t" not in str(item)


def test_an_error_is_logged_with_a_traceback_naming_main_py(runtime, world, org_admin):
    installation = world["installed"]["alpha"]
    answer = requests.get(installation_public_endpoint(installation) + "/boom", timeout=20)
    assert answer.status_code == 502
    assert "Traceback" not in answer.text  # the world sees no stack
    item = logs(org_admin, f"{API}/integrations/alpha/logs/", outcome="error")["items"][0]
    assert (item["request"], item["status"]) == ("GET /boom", 500)
    error = item["error"]
    assert error.startswith("Traceback (most recent call last):\n")
    assert f'File "main.py", line {line_of("explode()")}, in fetch\n    explode()\n' in error
    raising = 'raise ValueError(WORD + " exploded")'
    assert f'File "main.py", line {line_of(raising)}, in explode\n' in error
    assert "ValueError: alpha exploded" in error
    assert "/bundle" not in error and "docplatform_sdk" not in error
    assert item["output"] == "alpha fetched GET /boom\n"


def test_oauth_and_component_calls_are_logged_as_such(runtime, world, org_admin):
    installation = world["installed"]["alpha"]
    requests.get(installation_public_endpoint(installation) + "/oauth?code=c0de", timeout=20)
    component_render(installation=installation, component_id="card", instance="one")
    items = logs(org_admin, f"{API}/integrations/alpha/logs/")["items"]
    by_kind = {item["kind"]: item for item in items}
    assert by_kind["oauth"]["request"] == "GET /oauth"
    assert by_kind["ui_render"]["request"] == "render card"
    assert by_kind["ui_render"]["output"] == "alpha rendering\n"
    assert "c0de" not in str(items)


def test_an_event_not_delivered_for_lack_of_a_scope_is_logged_once(
    runtime, write_integration, organization, org_admin
):
    narrow = publish_scripted(
        write_integration, org_admin, "narrow", "acme", scopes=["site:views:read"]
    )
    space = SpaceFactory(organization=organization)
    installation_create(user=org_admin, integration=narrow, organization=organization)
    installation = installation_create(
        user=org_admin, integration=narrow, organization=organization, space=space
    )
    space_content_update(space=space, pages=[{"path": "p", "title": "P"}])
    items = logs(org_admin, f"{API}/integrations/narrow/logs/", kind="not_delivered")["items"]
    assert len(items) == 1  # one line per event and installation, at the space installation
    item = items[0]
    assert (item["installationId"], item["event"], item["outcome"]) == (
        installation.pk,
        "space_content_updated",
        "not_delivered",
    )
    assert item["error"] == "not delivered: needs space:content:read"
    assert (item["status"], item["durationMs"], item["output"]) == (None, None, "")


def test_an_answer_the_platform_cannot_use_is_the_calls_error(
    runtime, write_integration, organization, org_admin
):
    options = {"type": "string", "title": "P", "description": "d", "completion_url": "/options"}
    picky = publish_scripted(
        write_integration,
        org_admin,
        "picky",
        "acme",
        blocks=[
            {"id": "card", "title": "Card", "description": "A card."},
            {"id": "broken", "title": "Broken", "description": "Renders nonsense."},
        ],
        configurations={"account": {"properties": {"project": options}}},
    )
    installation = installation_create(user=org_admin, integration=picky, organization=organization)
    with pytest.raises(IntegrationFault):
        component_render(installation=installation, component_id="broken", instance="b")
    with pytest.raises(IntegrationFault):
        completion_options(installation=installation, property_name="project")
    items = logs(org_admin, f"{API}/installations/{installation.pk}/logs/", outcome="error")
    rendered, completed = items["items"]
    assert (rendered["kind"], rendered["request"], rendered["status"]) == (
        "ui_render",
        "render broken",
        502,
    )
    assert "the component's element is not markup" in rendered["error"]
    assert rendered["output"] == "picky rendering nonsense\n"
    assert (completed["kind"], completed["request"], completed["status"]) == (
        "completion",
        "GET /options",
        201,
    )
    assert completed["error"] == "the integration answered HTTP 201 on /options"
    assert completed["output"] == "picky fetched GET /options\n"
