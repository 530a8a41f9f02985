"""Integration blocks in the pages of the documentation product, rendered by a real runtime
host: the reader shows them, their buttons act without a reload, their state survives new
revisions, an unchanged block is not rendered twice, a page's blocks render at once, and a
block that cannot render shows a box in its place (never a broken page)."""

import json
import shutil
from pathlib import Path

import pytest
from django.http import QueryDict

from docplatform.markdown import block_fence, parse_document
from docplatform.reading.blocks import BlockPlace, provider
from docplatform.revisions import space_content_update
from integrations.environment import runtime_signing_key
from integrations.models import ComponentState, IntegrationLog
from integrations.services import integration_publish_folder
from integrations.services.installations import installation_create, installation_pause
from tests.integrations.runtime.support import RunningHost

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "quick-insert-counter"

pytestmark = pytest.mark.slow


def counter(key: str, **props) -> str:
    return block_fence(integration="quick-insert-counter", block="counter", key=key, props=props)


@pytest.fixture
def space_spec():
    return {"title": "Handbook", "revision": False}


@pytest.fixture
def installation(runtime, org_admin, organization, space):
    integration = integration_publish_folder(path=EXAMPLE, publisher=org_admin).version.integration
    return installation_create(
        user=org_admin, integration=integration, organization=organization, space=space
    )


@pytest.fixture
def member(client, org_member):
    client.force_login(org_member)
    return client


def write(space, body: str, author=None):
    return space_content_update(
        space=space, pages=[{"path": "intro", "title": "Intro", "body": body}], author=author
    )


def press(client, space, key: str, label: str):
    """Press a block's button as reader.js does (the form, the pressed button)."""
    action = {"Increment": {"action": "increment"}, "Reset": {"action": "reset"}}[label]
    return client.post(
        f"/s/{space.pk}/-/blocks",
        {"page": "intro", "key": key, "instance": f"{space.pk}-{key}", "press": json.dumps(action)},
        HTTP_X_REQUESTED_WITH="fetch",
    )


def renders() -> int:
    return IntegrationLog.objects.filter(kind=IntegrationLog.Kind.UI_RENDER).count()


def test_a_block_in_a_page_acts_in_place_and_keeps_its_state_across_revisions(
    member, space, installation
):
    write(space, f"Before.\n\n{counter('one', start=5)}\nAfter.\n")
    page = member.get(f"/s/{space.pk}/intro").content.decode()
    assert "Count: 5" in page
    assert 'data-block-key="one"' in page

    answer = press(member, space, "one", "Increment")
    assert answer.status_code == 200
    assert "Count: 6" in answer.content.decode()
    assert "<html" not in answer.content.decode()  # the block alone, for the script

    write(space, f"Rewritten.\n\n{counter('one', start=5)}\n")
    assert "Count: 6" in member.get(f"/s/{space.pk}/intro").content.decode()
    state = ComponentState.objects.get(instance=f"{space.pk}-one")
    assert state.state == {"count": 6}


def test_an_unchanged_block_is_not_rendered_again(member, space, installation):
    write(space, counter("one") + "\n" + counter("two"))
    member.get(f"/s/{space.pk}/intro")
    first = renders()
    assert first == 2
    member.get(f"/s/{space.pk}/intro")
    assert renders() == first  # both from the cache
    press(member, space, "one", "Increment")  # the action and its render
    member.get(f"/s/{space.pk}/intro")
    assert renders() == first + 1  # "one" changed state: rendered again by the action only


def test_a_press_names_its_block_by_key_never_by_the_form(member, space, installation):
    write(space, counter("one"))
    member.get(f"/s/{space.pk}/intro")
    missing = press(member, space, "nope", "Increment")
    assert missing.status_code == 404
    assert ComponentState.objects.get(instance=f"{space.pk}-one").state == {"count": 0}


def test_blocks_that_cannot_render_show_a_box_and_the_page_still_reads(
    member, space, installation, org_admin
):
    body = "\n".join(
        [
            counter("one"),
            "```block\nnot json\n```",
            block_fence(integration="not-installed", block="x", key="two", props={}),
            block_fence(integration="quick-insert-counter", block="gone", key="three", props={}),
        ]
    )
    write(space, body)
    page = member.get(f"/s/{space.pk}/intro")
    html = page.content.decode()
    assert page.status_code == 200
    assert "Count: 0" in html
    assert "the block is not valid JSON" in html
    assert "is not installed on this space" in html
    assert "has no block &#x27;gone&#x27;" in html

    installation_pause(user=org_admin, installation=installation)
    html = member.get(f"/s/{space.pk}/intro").content.decode()
    assert "is paused" in html
    assert "Count: 0" not in html


def test_only_members_press_buttons_and_readers_of_public_spaces_see_them_disabled(
    client, space, installation
):
    space.visibility = "public"
    space.save()
    write(space, counter("one"))
    html = client.get(f"/s/{space.pk}/intro").content.decode()
    assert "Count: 0" in html and "<fieldset disabled" in html
    assert press(client, space, "one", "Increment").status_code == 404


def test_on_a_sites_page_only_a_block_made_for_visitors_takes_presses(
    space, installation, org_admin, tmp_path, rf
):
    """A published site's page (``for_visitors``) shows a block read-only unless its manifest
    entry says ``visitors: true``; then its form carries no CSRF token (no session there)."""
    write(space, counter("one"))
    [ref] = parse_document(counter("one")).blocks
    request = rf.get("/")
    place = BlockPlace(
        space=space,
        page_path="intro",
        request=request,
        interactive=True,
        action_url="/site/-/blocks",
        for_visitors=True,
    )
    html = provider().render([ref], place)[ref.index]
    assert "<fieldset disabled" in html and "<form" not in html
    increment = QueryDict(mutable=True)
    increment["press"] = json.dumps({"action": "increment"})
    increment["instance"] = f"{space.pk}-one"
    refused = provider().act(ref, place, increment)
    assert "do not work here" in refused
    assert ComponentState.objects.filter(instance=f"{space.pk}-one").count() <= 1

    for_visitors = tmp_path / "counter"
    shutil.copytree(EXAMPLE, for_visitors)
    manifest = for_visitors / "service-manifest.yaml"
    manifest.write_text(
        manifest.read_text().replace(
            "    title: Counter\n", "    title: Counter\n    visitors: true\n"
        )
    )
    integration_publish_folder(path=for_visitors, publisher=org_admin)
    html = provider().render([ref], place)[ref.index]
    assert '<form method="post" action="/site/-/blocks"' in html
    assert "csrfmiddlewaretoken" not in html
    pressed = provider().act(ref, place, increment)
    assert "Count: 1" in pressed


SLOW_SCRIPT = """\
import time

from docplatform_sdk import block, create_component, create_integration, text


def render(element, context):
    time.sleep(float(element.props.get("sleep", 0)))
    return block(text("slept " + str(element.props.get("sleep", 0))))


integration = create_integration(components=[create_component("nap", render=render)])
"""


@pytest.fixture
def roomy_host(tmp_path_factory, settings, runtime):
    """A runtime host with three workers per version, so three renders can run at once."""
    host = RunningHost(
        runtime_signing_key(),
        tmp_path_factory.mktemp("roomy") / "host.log",
        RUNTIME_CALL_TIMEOUT="10",
        RUNTIME_WORKERS_PER_VERSION="3",
    )
    settings.RUNTIME_URL = host.frames_url
    yield host
    host.stop()


def test_a_pages_blocks_render_at_once_and_a_slow_one_is_cut_at_the_deadline(
    member, space, org_admin, organization, tmp_path, roomy_host, settings
):
    folder = tmp_path / "napper"
    folder.mkdir()
    (folder / "main.py").write_text(SLOW_SCRIPT)
    (folder / "service-manifest.yaml").write_text(
        "name: napper\ntitle: Napper\ndescription: Sleeps, then renders.\n"
        "organization: acme\nvisibility: private\nscopes: []\nscript: main.py\n"
        "blocks:\n  - {id: nap, title: Nap, description: Sleeps.}\n"
    )
    napper = integration_publish_folder(path=folder, publisher=org_admin).version.integration
    installation_create(user=org_admin, integration=napper, organization=organization, space=space)
    naps = [
        block_fence(integration="napper", block="nap", key=f"n{n}", props={"sleep": 1.2})
        for n in range(3)
    ]
    write(space, "\n".join(naps))
    # Three renders of 1.2 s each fit in a 3 s deadline only when they run at once.
    settings.BLOCK_RENDER_DEADLINE = 3.0
    html = member.get(f"/s/{space.pk}/intro").content.decode()
    assert html.count("slept 1.2") == 3, html

    write(space, block_fence(integration="napper", block="nap", key="long", props={"sleep": 8}))
    settings.BLOCK_RENDER_DEADLINE = 1.0
    page = member.get(f"/s/{space.pk}/intro")
    assert page.status_code == 200
    assert "did not answer within 1 s" in page.content.decode()
