"""The documentation product clicked through in Chromium against a live server, with the real
runtime host and, where events must arrive, a real Celery worker (skipped without Playwright or
Chromium, as tests/marketplace/test_browser.py is). Screenshots of the reader and the editor
land in the system's temporary folder."""

import json
import re
import tempfile
import textwrap
from html.parser import HTMLParser
from pathlib import Path

import pytest
import requests
import yaml
from django.core.cache import cache
from django.test import Client
from docplatform_sdk.receiver import verify_signature

from docplatform.events.models import Delivery, Event
from docplatform.markdown import block_fence
from docplatform.models import Space
from docplatform.revisions import space_content_update
from docplatform.services import api_token_create
from integrations.services import integration_publish_folder
from integrations.services.installations import installation_create, installation_pause
from tests.conftest import wait_until
from tests.factories import MembershipFactory, OrganizationFactory
from tests.integrations.conftest import minimal_manifest
from webhooks.services.signing_secrets import signing_secret_current

pytestmark = pytest.mark.slow


REPO = Path(__file__).resolve().parents[3]
COUNTER = REPO / "examples" / "quick-insert-counter"
SCREENSHOTS = Path(tempfile.gettempdir())

INTRO = "# Welcome\n\nHello *world*.\n\nThe first version of this line.\n"


# --- People, a space and integrations --------------------------------------------------------


@pytest.fixture
def space_spec(alice):
    return {
        "title": "Handbook",
        "pages": [
            {"path": "intro", "title": "Intro", "body": INTRO},
            {"path": "guide", "title": "Guide", "body": "Read **this**."},
        ],
        "author": alice,
        "message": "First pages",
    }


def publish_script(tmp_path, publisher, script: str, **manifest):
    """Publish an integration of ``script`` (main.py) through the real publish service."""
    root = tmp_path / manifest["name"]
    root.mkdir()
    fields = minimal_manifest(script="main.py", **manifest)
    (root / "service-manifest.yaml").write_text(yaml.safe_dump(fields, sort_keys=False))
    (root / "main.py").write_text(textwrap.dedent(script))
    return integration_publish_folder(path=root, publisher=publisher).version.integration


def install_counter(alice, organization, space):
    counter = integration_publish_folder(path=COUNTER, publisher=alice).version.integration
    return installation_create(
        user=alice, integration=counter, organization=organization, space=space
    )


def sign_in(page, live_server, user, then: str = "/s/") -> None:
    page.goto(f"{live_server.url}/marketplace/login/?next={then}")
    page.fill("input[name=username]", user.username)
    page.fill("input[name=password]", "password")
    page.click("button:has-text('Sign in')")
    page.wait_for_url(lambda url: "/login/" not in url)
    page.get_by_role("button", name="Sign out").wait_for()


def accept_leaving(page) -> None:
    """Accept the editor's "leave the page?" question (unsaved changes) when it comes."""
    page.on("dialog", lambda dialog: dialog.accept() if dialog.type == "beforeunload" else None)


# --- 1. space_view ------------------------------------------------------------------------------

VIEW_RECORDER = """
    from docplatform_sdk import create_integration

    def on_view(event, context):
        # What arrived, written back to this installation with its own token.
        visitor = event["visitor"]
        context.api.update_installation(
            external_ids=["viewer:" + str(visitor.get("userId")), "space:" + event["spaceId"]]
        )

    integration = create_integration(events={"space_view": on_view})
"""


def test_opening_a_space_from_the_top_bar_fires_space_view_once_to_its_integration(
    runtime, live_server, celery_worker, browser_page, tmp_path, organization, alice, space
):
    recorder = publish_script(
        tmp_path, alice, VIEW_RECORDER, name="view-recorder", scopes=["space:metadata:read"]
    )
    installation = installation_create(
        user=alice, integration=recorder, organization=organization, space=space
    )
    page = browser_page
    sign_in(page, live_server, alice, then="/marketplace/")

    page.get_by_role("navigation").get_by_role("link", name="Spaces").click()
    page.get_by_role("link", name="Handbook").click()
    page.wait_for_url(f"{live_server.url}/s/{space.pk}/")
    page.locator("h1.doc-title", has_text="Intro").wait_for()

    (view,) = Event.objects.filter(type="space_view")
    assert view.space_id == space.pk
    assert view.payload["visitor"]["userId"] == str(alice.pk)

    def handled():
        installation.refresh_from_db()
        return installation.external_ids

    wait_until(handled, timeout=30)
    assert installation.external_ids == [f"viewer:{alice.pk}", f"space:{space.pk}"]
    delivery = Delivery.objects.get(installation=installation, event=view)
    wait_until(lambda: Delivery.objects.get(pk=delivery.pk).status != "pending")
    delivery.refresh_from_db()
    assert (delivery.status, delivery.outcome) == ("succeeded", "handled"), delivery.last_error

    token = api_token_create(user=alice, name="events")[1]
    listed = requests.get(
        f"{live_server.url}/api/v1/orgs/acme/events/",
        params={"type": "space_view"},
        headers={"Authorization": f"Bearer {token}"},
        timeout=20,
    )
    assert listed.status_code == 200, listed.text
    (shown,) = listed.json()["results"]
    assert (shown["id"], shown["type"], shown["space"]) == (str(view.pk), "space_view", space.pk)
    assert shown["payload"]["visitor"]["userId"] == str(alice.pk)

    # Within 5 minutes, another open of the space (and another page of it) fires none: the
    # database decides, as for a read served by another process (its own empty cache).
    page.reload()
    cache.clear()
    page.reload()
    page.get_by_role("link", name="Guide").first.click()
    page.locator("h1.doc-title", has_text="Guide").wait_for()
    assert Event.objects.filter(type="space_view").count() == 1
    assert Delivery.objects.filter(event__type="space_view").count() == 1


# --- 2. space_content_updated -------------------------------------------------------------------


def test_saving_in_the_editor_delivers_a_signed_space_content_updated(
    live_server,
    celery_worker,
    webhook_settings,
    receiver,
    browser_page,
    organization,
    alice,
    space,
):
    from integrations.models import Integration

    webhook = installation_create(
        user=alice,
        integration=Integration.objects.get(name="webhook"),
        organization=organization,
        space=space,
        configuration={"url": receiver.url},
    )
    assert webhook.status == "active"
    page = browser_page
    sign_in(page, live_server, alice, then=f"/s/{space.pk}/intro/edit")

    page.fill("#id_body", INTRO + "\nA line alice added.\n")
    page.fill("#id_message", "Add a line")
    page.get_by_role("button", name="Save", exact=True).click()
    page.wait_for_url(re.compile(rf"/s/{space.pk}/intro$"))
    page.locator(".messages", has_text="Saved as revision").wait_for()
    page.locator(".doc-body", has_text="A line alice added.").wait_for()
    # Saved: the editor opens on the saved text, with no unsaved draft to restore.
    page.get_by_role("link", name="Edit", exact=True).click()
    page.wait_for_url(re.compile(r"/intro/edit$"))
    page.wait_for_load_state()  # the editor's script has run
    assert page.locator("#id_body").input_value() == INTRO + "\nA line alice added.\n"
    assert page.locator("[data-draft-notice]").is_hidden()
    assert page.evaluate("localStorage.length") == 0

    (received,) = receiver.wait_for(1, timeout=30)
    space.refresh_from_db()
    body = json.loads(received.body)
    assert body["type"] == "space_content_updated"
    assert (body["spaceId"], body["revisionId"]) == (space.pk, space.current_revision_id)
    assert body["installationId"] == webhook.id
    assert received.headers["X-Service-Event"] == "space_content_updated"
    secret = signing_secret_current(webhook)
    assert verify_signature(received.body, received.headers["X-Service-Signature"], secret) > 0


# --- 3. The quick insert menu and a counter block -----------------------------------------------


NOTE_BLOCK = """
    from docplatform_sdk import block, create_component, create_integration, text

    integration = create_integration(
        components=[create_component("note", render=lambda element, context: block(text("A note")))]
    )
"""


@pytest.mark.parametrize("opened_by", ["shortcut", "button"])
def test_quick_insert_a_counter_then_press_it_in_the_reader(
    runtime, live_server, browser_page, tmp_path, organization, alice, space, opened_by
):
    install_counter(alice, organization, space)
    notes = publish_script(
        tmp_path,
        alice,
        NOTE_BLOCK,
        name="notes",
        title="Notes",
        scopes=[],
        blocks=[{"id": "note", "title": "Note", "description": "A short note."}],
    )
    installation_create(user=alice, integration=notes, organization=organization, space=space)
    page = browser_page
    sign_in(page, live_server, alice, then=f"/s/{space.pk}/intro/edit")
    dialog = page.get_by_role("dialog", name="Quick insert")
    body = page.locator("#id_body")

    def open_menu():
        body.click()
        page.keyboard.press("Control+End")  # the block goes where the cursor is
        if opened_by == "shortcut":
            page.keyboard.press("Control+/")
        else:
            page.get_by_role("button", name="Insert", exact=True).click()
        dialog.wait_for()
        assert page.evaluate("document.activeElement.matches('[data-quick-insert-search]')")

    open_menu()
    page.keyboard.press("Escape")
    dialog.wait_for(state="hidden")
    assert "```block" not in body.input_value()

    open_menu()
    options = dialog.get_by_role("option")
    assert options.count() == 2
    chosen = dialog.locator("[role=option][aria-selected=true]")
    first = chosen.inner_text()
    page.keyboard.press("ArrowDown")
    assert chosen.inner_text() != first
    page.keyboard.press("ArrowDown")  # past the last: back to the first
    assert chosen.inner_text() == first
    page.keyboard.press("ArrowUp")
    assert chosen.inner_text() != first
    page.keyboard.type("count")
    option = dialog.get_by_role("option", name=re.compile("Counter"))
    option.wait_for()
    assert options.count() == 1
    assert option.get_attribute("aria-selected") == "true"
    page.keyboard.press("Enter")
    dialog.wait_for(state="hidden")

    markdown = body.input_value()
    assert markdown.startswith(INTRO)
    fence = json.loads(markdown.split("```block\n", 1)[1].split("\n```", 1)[0])
    assert (fence["integration"], fence["block"], fence["props"]) == (
        "quick-insert-counter",
        "counter",
        {},
    )
    page.locator("[data-preview] .page-block", has_text="Count: 0").wait_for()
    page.get_by_role("button", name="Save", exact=True).click()

    page.wait_for_url(re.compile(rf"/s/{space.pk}/intro$"))
    block = page.locator(".doc-body .page-block")
    block.get_by_text("Count: 0").wait_for()
    page.evaluate("window.__marker = 1")
    block.get_by_role("button", name="Increment").click()
    block.get_by_text("Count: 1").wait_for()
    block.get_by_role("button", name="Increment").click()
    block.get_by_text("Count: 2").wait_for()
    assert page.evaluate("window.__marker") == 1  # no reload, no navigation

    page.reload()
    block.get_by_text("Count: 2").wait_for()
    assert page.evaluate("window.__marker") is None


# --- 4. Two people edit the same page -----------------------------------------------------------


def test_two_people_editing_different_lines_both_keep_theirs_with_no_question(
    live_server, browser_page, organization, alice, carol, space
):
    alice_page = browser_page
    carol_page = alice_page.context.browser.new_context(
        viewport={"width": 1280, "height": 900}
    ).new_page()
    carol_page.set_default_timeout(15_000)
    edit = f"/s/{space.pk}/intro/edit"
    sign_in(alice_page, live_server, alice, then=edit)
    sign_in(carol_page, live_server, carol, then=edit)

    alice_page.fill("#id_body", INTRO.replace("The first version", "Alice's version"))
    carol_page.fill("#id_body", INTRO.replace("Hello *world*.", "Hello, *Carol's* world."))
    alice_page.get_by_role("button", name="Save", exact=True).click()
    alice_page.locator(".doc-body", has_text="Alice's version of this line.").wait_for()
    carol_page.get_by_role("button", name="Save", exact=True).click()

    carol_page.locator(".doc-body", has_text="Alice's version of this line.").wait_for()
    assert "Carol's world" in carol_page.locator(".doc-body").inner_text()
    assert carol_page.locator("[data-conflict]").count() == 0
    space.refresh_from_db()
    body = space.current_revision.pages.get(path="intro").body
    assert "Alice's version" in body and "Carol's* world" in body


def test_a_conflict_keeps_both_changes_and_the_history_shows_diffs_and_restores(
    live_server, browser_page, organization, alice, carol, space
):
    first_revision = space.current_revision_id
    alice_page = browser_page
    carol_page = alice_page.context.browser.new_context(
        viewport={"width": 1280, "height": 900}
    ).new_page()
    carol_page.set_default_timeout(15_000)
    edit = f"/s/{space.pk}/intro/edit"
    sign_in(alice_page, live_server, alice, then=edit)
    sign_in(carol_page, live_server, carol, then=edit)

    alice_page.fill("#id_body", INTRO.replace("The first version", "Alice's version"))
    alice_page.fill("#id_message", "Alice edits")
    carol_page.fill("#id_body", INTRO.replace("The first version", "Carol's version"))
    carol_page.fill("#id_message", "Carol edits")
    alice_page.get_by_role("button", name="Save", exact=True).click()
    alice_page.locator(".doc-body", has_text="Alice's version of this line.").wait_for()
    space.refresh_from_db()
    alice_revision = space.current_revision_id

    carol_page.get_by_role("button", name="Save", exact=True).click()
    conflict = carol_page.locator("[data-conflict]")
    conflict.wait_for()
    assert "alice saved this page after you opened it" in conflict.inner_text()
    overlap = conflict.locator("[data-hunk]")
    assert overlap.count() == 1
    assert "Alice's version of this line." in overlap.locator(".diff-del-sample").inner_text()
    assert "Carol's version of this line." in overlap.locator(".diff-add-sample").inner_text()
    assert "Carol's version" in carol_page.locator("#id_body").input_value()
    space.refresh_from_db()
    assert space.current_revision_id == alice_revision  # nothing written yet

    overlap.get_by_label("Mine").check()
    conflict.get_by_role("button", name="Save the merge").click()
    carol_page.locator(".doc-body", has_text="Carol's version of this line.").wait_for()
    space.refresh_from_db()
    carol_revision = space.current_revision
    assert carol_revision.parent_id == alice_revision
    assert carol_revision.author == carol
    assert "Carol's version" in carol_revision.pages.get(path="intro").body

    # The history shows both; Alice's revision is still readable as it was.
    carol_page.goto(f"{live_server.url}/s/{space.pk}/history")
    entries = carol_page.locator(".history-entry")
    assert entries.nth(0).locator(".history-message").inner_text() == "Carol edits"
    assert entries.nth(1).locator(".history-message").inner_text() == "Alice edits"
    entries.nth(1).get_by_role("link", name="Read").click()
    carol_page.locator(".note", has_text=alice_revision[:8]).wait_for()
    carol_page.locator(".doc-body", has_text="Alice's version of this line.").wait_for()

    carol_page.goto(f"{live_server.url}/s/{space.pk}/history")
    entries.nth(0).get_by_role("link", name="Compare with the one before").click()
    carol_page.wait_for_url(re.compile(rf"/history/{carol_revision.pk}/diff$"))
    diff = carol_page.locator(".diff").inner_text()
    assert "- Alice's version of this line." in diff
    assert "+ Carol's version of this line." in diff
    assert "Hello *world*." in diff  # context around the changed line

    # Restore the first revision: a new revision with the old text, nothing rewritten.
    carol_page.goto(f"{live_server.url}/s/{space.pk}/history")
    restore = carol_page.locator(".history-entry", has_text=first_revision[:8])
    restore.get_by_role("button", name="Restore").click()
    carol_page.locator(".messages", has_text=f"Revision {first_revision[:8]} restored").wait_for()
    assert carol_page.locator(".history-entry").count() == 4
    carol_page.goto(f"{live_server.url}/s/{space.pk}/intro")
    carol_page.locator(".doc-body", has_text="The first version of this line.").wait_for()
    space.refresh_from_db()
    assert space.current_revision.pages.get(path="intro").body == INTRO
    carol_page.context.close()


# --- 5. Drafts ----------------------------------------------------------------------------------


def test_unsaved_changes_survive_a_reload_of_the_editor(live_server, browser_page, alice, space):
    page = browser_page
    accept_leaving(page)
    sign_in(page, live_server, alice, then=f"/s/{space.pk}/intro/edit")
    notice = page.locator("[data-draft-notice]")
    assert notice.is_hidden()

    page.locator("#id_body").fill(INTRO + "\nNot saved yet.\n")
    page.locator("#id_title").fill("Intro, retitled")
    page.reload()

    notice.wait_for()
    assert "restored" in notice.inner_text()
    assert page.locator("#id_body").input_value() == INTRO + "\nNot saved yet.\n"
    assert page.locator("#id_title").input_value() == "Intro, retitled"
    page.locator("[data-preview]", has_text="Not saved yet.").wait_for()

    # Discarding them brings the saved page back.
    notice.get_by_role("button", name="Discard them").click()
    page.wait_for_load_state()
    page.locator("#id_title[value='Intro']").wait_for()
    assert page.locator("#id_body").input_value() == INTRO
    assert notice.is_hidden()


# --- 6. A paused installation's block ------------------------------------------------------------


def test_a_paused_installations_block_shows_a_box_saying_so(
    runtime, live_server, browser_page, organization, alice, space
):
    installation = install_counter(alice, organization, space)
    fence = block_fence(integration="quick-insert-counter", block="counter", key="k1", props={})
    space_content_update(
        space=space,
        pages=[{"path": "intro", "title": "Intro", "body": f"Before.\n\n{fence}\nAfter.\n"}],
        author=alice,
    )
    installation_pause(installation=installation, user=alice)
    page = browser_page
    sign_in(page, live_server, alice, then="/s/")

    response = page.goto(f"{live_server.url}/s/{space.pk}/intro")
    assert response.status == 200
    box = page.locator(".doc-body .page-block-notice")
    assert box.get_attribute("role") == "note"
    assert "paused" in box.inner_text().lower()
    assert "Quick insert counter" in box.inner_text()
    page.locator(".doc-body", has_text="After.").wait_for()
    assert page.locator(".doc-body .page-block-form").count() == 0


# --- 7. Another organization ---------------------------------------------------------------------


def test_every_address_of_a_private_space_is_unknown_to_another_organization(space):
    globex = OrganizationFactory(subdomain="globex")
    outsider = MembershipFactory(organization=globex, role="admin").user
    client = Client()
    client.force_login(outsider)
    revision = space.current_revision_id
    base = f"/s/{space.pk}/"
    for address in [
        "",
        "intro",
        "intro/edit",
        "history",
        f"history/{revision}/",
        f"history/{revision}/intro",
        f"history/{revision}/diff",
        "settings",
        "new",
    ]:
        assert client.get(base + address).status_code == 404, address
    for address, data in [
        ("intro/edit", {"title": "X", "path": "intro", "body": "x", "based_on": revision}),
        ("new", {"title": "X", "path": "x", "body": "x"}),
        ("settings", {"title": "Taken", "visibility": "public"}),
        (f"history/{revision}/restore", {}),
        ("-/preview", {"body": "x"}),
        ("-/delete", {"path": "intro", "based_on": revision}),
        ("-/move", {"path": "intro", "direction": "down"}),
        ("-/blocks", {"page": "intro", "key": "k1"}),
    ]:
        assert client.post(base + address, data).status_code == 404, address
    space.refresh_from_db()
    assert space.current_revision_id == revision
    assert Space.objects.get(pk=space.pk).visibility == "private"
    assert space.title == "Handbook"
    assert f"/s/{space.pk}/" not in client.get("/s/").content.decode()


# --- 8. Hostile content --------------------------------------------------------------------------

HOSTILE_MARKDOWN = """\
# Hostile

<script>window.__pwned=1</script>

[x](javascript:window.__pwned=1) [x2](JaVaScRiPt:window.__pwned=1)
[y](data:text/html,<script>window.__pwned=1</script>)
[v](vbscript:msgbox(1))
![z](javascript:window.__pwned=1) ![z2](data:image/svg+xml,<svg onload=window.__pwned=1>)

<img src=x onerror="window.__pwned=1">

<iframe src="javascript:window.__pwned=1"></iframe>

<a href="javascript:window.__pwned=1" onclick="window.__pwned=1">raw</a>

[safe](#hostile) [relative](intro#hostile)
"""

HOSTILE_SCRIPT = """
    from docplatform_sdk import block, button, create_component, create_integration, link, text

    def render(element, context):
        return block(
            text("<script>window.__pwned=1</script>"),
            link("<img src=x onerror=window.__pwned=1>", "javascript:window.__pwned=1"),
            link("data", "data:text/html,<script>window.__pwned=1</script>"),
            button("<b onmouseover=window.__pwned=1>press</b>", on_press={"action": "x"}),
        )

    integration = create_integration(
        components=[
            create_component(
                "evil", render=render, action=lambda element, action, context: {"state": {}}
            )
        ]
    )
"""


class Markup(HTMLParser):
    """Every start tag of an HTML document, with its attributes."""

    def __init__(self, html: str):
        super().__init__(convert_charrefs=True)
        self.tags: list[tuple[str, dict]] = []
        self.feed(html)

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, {name: value or "" for name, value in attrs}))


# A tag with an on...= attribute, its earlier attributes read whole (so that text inside a quoted
# value, such as an escaped "<b onmouseover=x>" in an input's value, is not taken for one).
HANDLER_ATTRIBUTE = re.compile(
    r"<[a-z][^\s>]*(?:\s+[^\s=>\"']+(?:\s*=\s*(?:\"[^\"]*\"|'[^']*'|[^\s>\"']+))?)*\s+on[a-z]+\s*=",
    re.IGNORECASE,
)
UNSAFE_ADDRESS = re.compile(r"^\s*(javascript|data|vbscript):", re.IGNORECASE)


def assert_inert(html: str) -> None:
    """No script but the page's own, no event handler attribute, no script address."""
    for tag, attrs in Markup(html).tags:
        if tag == "script":  # the page's own scripts, or the editor's JSON data
            own = attrs.get("src", "").startswith("/static/")
            assert own or attrs.get("type") == "application/json", attrs
        assert not [name for name in attrs if name.startswith("on")], (tag, attrs)
        for name in ("href", "src", "action", "formaction", "srcset", "xlink:href", "data"):
            assert not UNSAFE_ADDRESS.match(attrs.get(name, "")), (tag, attrs)
        assert tag not in ("iframe", "object", "embed", "svg", "math", "base"), tag
    assert not re.search(r"<script(?![^>]*\s(src=\"/static/|type=\"application/json\"))", html)
    assert not HANDLER_ATTRIBUTE.search(html)


BROWSER_CHECK = """() => {
  const bad = [];
  for (const el of document.querySelectorAll("*")) {
    for (const attr of el.attributes) {
      if (attr.name.startsWith("on")) bad.push(el.tagName + " " + attr.name);
      const address = /^\\s*(javascript|data|vbscript):/i.test(attr.value);
      if (address) bad.push(el.tagName + " " + attr.name);
    }
  }
  for (const s of document.scripts) {
    if (!s.src.includes("/static/") && s.type !== "application/json") bad.push("inline script");
  }
  for (const el of document.querySelectorAll("iframe, object, embed, svg")) bad.push(el.tagName);
  return bad;
}"""


def click_everything(page, url: str, selector: str) -> None:
    """Click each link and button of ``selector`` on the page at ``url``, checking after each
    click that nothing ran (a link to another document is followed, then the page opened
    again; a block's button is pressed and its new HTML awaited)."""
    count = page.locator(selector).count()
    assert count
    for index in range(count):
        page.goto(url)
        target = page.locator(selector).nth(index)
        leaves = target.evaluate(
            "el => el.tagName === 'A' && !!el.href"
            " && el.href.split('#')[0] !== location.href.split('#')[0]"
        )
        if leaves:
            with page.expect_navigation():
                target.click()
        else:
            target.click()
            page.wait_for_function("!document.querySelector('[aria-busy]')")
        assert page.evaluate("typeof window.__pwned") == "undefined"


def test_hostile_markdown_and_component_markup_stay_inert(
    runtime, live_server, browser_page, tmp_path, organization, alice, space
):
    evil = publish_script(
        tmp_path,
        alice,
        HOSTILE_SCRIPT,
        name="evil-blocks",
        title="Evil <script>window.__pwned=1</script>",
        scopes=[],
        blocks=[
            {
                "id": "evil",
                "title": "<img src=x onerror=window.__pwned=1>",
                "description": "<script>window.__pwned=1</script>",
            }
        ],
        summary=HOSTILE_MARKDOWN,
    )
    installation_create(user=alice, integration=evil, organization=organization, space=space)
    fence = block_fence(integration="evil-blocks", block="evil", key="evil1", props={})
    space_content_update(
        space=space,
        pages=[
            {
                "path": "intro",
                "title": "<b onmouseover=x>Intro</b>",
                "body": HOSTILE_MARKDOWN + "\n" + fence,
            }
        ],
        author=alice,
    )
    reader = f"/s/{space.pk}/intro"
    client = Client()
    client.force_login(alice)
    served = client.get(reader)
    assert served.status_code == 200
    html = served.content.decode()
    assert "&lt;script&gt;window.__pwned=1&lt;/script&gt;" in html  # shown as text
    assert_inert(html)
    preview = client.post(f"/s/{space.pk}/-/preview", {"body": HOSTILE_MARKDOWN + fence})
    assert preview.status_code == 200
    assert_inert(preview.content.decode())
    assert_inert(client.get(f"/s/{space.pk}/intro/edit").content.decode())
    catalogue_page = f"/marketplace/orgs/acme/integrations/{evil.name}/"
    summary = client.get(catalogue_page)
    assert summary.status_code == 200
    assert_inert(summary.content.decode())

    # In the browser, with the Content-Security-Policy off: only the markup itself protects.
    context = browser_page.context.browser.new_context(bypass_csp=True)
    page = context.new_page()
    page.set_default_timeout(15_000)
    dialogs = []
    page.on("dialog", lambda dialog: (dialogs.append(dialog.message), dialog.dismiss()))
    context.on("page", lambda popup: popup.close())
    sign_in(page, live_server, alice, then=reader)
    page.locator(".page-block", has_text="<script>window.__pwned=1</script>").wait_for()
    assert page.evaluate(BROWSER_CHECK) == []
    click_everything(page, live_server.url + reader, ".doc-body a, .doc-body button")
    page.goto(live_server.url + reader)
    assert page.evaluate(BROWSER_CHECK) == []

    # The editor: its preview (the server's HTML put in place) and the quick insert menu.
    page.goto(f"{live_server.url}/s/{space.pk}/intro/edit")
    page.locator("[data-preview] .page-block", has_text="<script>").wait_for()
    page.get_by_role("button", name="Insert", exact=True).click()
    menu = page.get_by_role("dialog", name="Quick insert")
    menu.get_by_role("option", name=re.compile("<img src=x onerror")).wait_for()
    assert page.evaluate(BROWSER_CHECK) == []
    assert page.evaluate("typeof window.__pwned") == "undefined"

    page.goto(live_server.url + catalogue_page)
    page.locator(".summary", has_text="<script>window.__pwned=1</script>").wait_for()
    assert page.evaluate(BROWSER_CHECK) == []
    click_everything(page, live_server.url + catalogue_page, ".summary a")
    assert page.evaluate("typeof window.__pwned") == "undefined"
    assert dialogs == []
    context.close()


# --- 9. Small screens ----------------------------------------------------------------------------

LONG_PAGE = (
    "# Reference\n\nAll the options.\n\n## Options\n\n"
    + "| "
    + " | ".join(f"Column {n}" for n in range(12))
    + " |\n|"
    + "---|" * 12
    + "\n| "
    + " | ".join(f"value-{n}-of-a-long-cell" for n in range(12))
    + " |\n\n## Example\n\n```sh\n"
    + "docplatform-integration publish --as alice "
    + "--env-file /a/very/long/path/" * 8
    + "\n```\n\n### Notes\n\n"
    + "A_very_long_word_without_any_break_" * 6
    + "\n"
)


def test_every_screen_fits_a_narrow_window_and_screenshots(
    runtime, live_server, browser_page, organization, alice, space
):
    install_counter(alice, organization, space)
    fence = block_fence(integration="quick-insert-counter", block="counter", key="c1", props={})
    revision = space_content_update(
        space=space,
        pages=[
            {"path": "intro", "title": "Intro", "body": INTRO + "\n" + fence},
            {"path": "guide", "title": "Guide", "body": "Read **this**."},
            {
                "path": "guide/reference",
                "title": "A reference page with a long title",
                "body": LONG_PAGE,
            },
        ],
        author=alice,
        message="Add a reference page with a long table and a long line of code",
    )
    page = browser_page
    sign_in(page, live_server, alice, then="/s/")
    reader = f"/s/{space.pk}/guide/reference"
    page.goto(live_server.url + reader)
    page.locator(".doc-toc").wait_for()
    page.screenshot(path=str(SCREENSHOTS / "docs-reader-1280.png"), full_page=True)
    page.goto(f"{live_server.url}/s/{space.pk}/intro/edit")
    page.locator("[data-preview] .page-block", has_text="Count: 0").wait_for()
    page.screenshot(path=str(SCREENSHOTS / "docs-editor-1280.png"), full_page=True)

    page.set_viewport_size({"width": 420, "height": 900})
    screens = {
        "spaces": "/s/",
        "reader": reader,
        "reader-block": f"/s/{space.pk}/intro",
        "editor": f"/s/{space.pk}/guide/reference/edit",
        "new": f"/s/{space.pk}/new",
        "history": f"/s/{space.pk}/history",
        "revision": f"/s/{space.pk}/history/{revision.pk}/guide/reference",
        "diff": f"/s/{space.pk}/history/{revision.pk}/diff",
        "settings": f"/s/{space.pk}/settings",
    }
    for name, address in screens.items():
        response = page.goto(live_server.url + address)
        assert response.status == 200, name
        if name == "editor":
            page.locator("[data-preview] h2", has_text="Reference").wait_for()
        width = page.evaluate("document.documentElement.scrollWidth")
        assert width <= 420, f"{name}: {width} px wide"
        if name in ("reader", "editor"):
            page.screenshot(path=str(SCREENSHOTS / f"docs-{name}-420.png"), full_page=True)
    page.goto(f"{live_server.url}/s/{space.pk}/intro/edit")
    page.get_by_role("button", name="Insert", exact=True).click()
    page.get_by_role("dialog", name="Quick insert").wait_for()
    assert page.evaluate("document.documentElement.scrollWidth") <= 420
    page.screenshot(path=str(SCREENSHOTS / "docs-quick-insert-420.png"))

    # The conflict panel: someone else saves the page while it is open here.
    page.keyboard.press("Escape")
    space_content_update(
        space=space,
        pages=[{"path": "intro", "title": "Intro", "body": "Changed meanwhile " * 30}],
        author=alice,
        message="Someone else's edit",
    )
    page.fill("#id_body", "Mine, " * 40)
    page.get_by_role("button", name="Save", exact=True).click()
    page.locator("[data-conflict]").wait_for()
    assert page.evaluate("document.documentElement.scrollWidth") <= 420
    page.screenshot(path=str(SCREENSHOTS / "docs-conflict-420.png"), full_page=True)
