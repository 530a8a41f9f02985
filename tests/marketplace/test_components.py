"""Components on the installation page, rendered by a real runtime host: the example's
configuration screen and counter blocks, submitted as a browser submits their forms."""

import textwrap
from html.parser import HTMLParser
from pathlib import Path

import pytest
import yaml
from django.urls import reverse

from integrations.models import ComponentState
from integrations.operators import OPERATOR
from integrations.services import integration_publish_folder
from integrations.services.installations import installation_create, installation_pause
from tests.factories import SpaceFactory

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "quick-insert-counter"

pytestmark = pytest.mark.slow


class PageForms(HTMLParser):
    """The forms of a page as a browser would submit them: each form's action, its fields'
    current values and its submit buttons (name, value, text)."""

    def __init__(self, html: str):
        super().__init__()
        self.forms: list[dict] = []
        self._select = None
        self._button = None
        self.feed(html)

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if tag == "form":
            self.forms.append({"action": attrs.get("action"), "fields": {}, "buttons": []})
        elif not self.forms:
            return
        fields = self.forms[-1]["fields"]
        if tag == "input" and "name" in attrs:
            if attrs.get("type") != "checkbox":
                fields.setdefault(attrs["name"], []).append(attrs.get("value", ""))
            elif "checked" in attrs:
                fields.setdefault(attrs["name"], []).append(attrs.get("value", "on"))
        elif tag == "select":
            self._select = attrs["name"]
        elif tag == "option" and self._select:
            if "selected" in attrs or self._select not in fields:
                fields[self._select] = [attrs["value"]]
        elif tag == "button":
            self._button = {"name": attrs.get("name"), "value": attrs.get("value"), "text": ""}
            self.forms[-1]["buttons"].append(self._button)

    def handle_endtag(self, tag):
        if tag == "select":
            self._select = None
        elif tag == "button":
            self._button = None

    def handle_data(self, data):
        if self._button is not None:
            self._button["text"] += data.strip()

    def component(self, instance: str) -> dict:
        """The form of a rendered component instance."""
        return next(
            form
            for form in self.forms
            if form["action"].endswith("/actions/") and form["fields"]["instance"] == [instance]
        )


def submit(client, form: dict, button: str, **changes):
    """Post ``form`` as a browser does when ``button`` is pressed after ``changes`` (a field
    name to its new value, None unchecking a checkbox)."""
    data = {**form["fields"]}
    for name, value in changes.items():
        if value is None:
            data.pop(name, None)
        else:
            data[name] = [value]
    pressed = next(b for b in form["buttons"] if b["text"] == button)
    if pressed["name"]:
        data[pressed["name"]] = [pressed["value"]]
    return client.post(form["action"], data)


def page_url(installation) -> str:
    return reverse("marketplace:installation", args=["acme", installation.pk])


@pytest.fixture
def space_installation(runtime, org_admin, organization):
    counter = integration_publish_folder(path=EXAMPLE, publisher=org_admin).version.integration
    return installation_create(
        user=org_admin,
        integration=counter,
        organization=organization,
        space=SpaceFactory(organization=organization, title="Handbook"),
    )


@pytest.fixture
def admin_client(client, org_admin):
    client.force_login(org_admin)
    return client


def test_the_configuration_screen_dispatches_changed_inputs_then_the_button(
    admin_client, space_installation
):
    page = admin_client.get(page_url(space_installation))
    assert page.status_code == 200
    screen = PageForms(page.content.decode()).component("configuration")
    assert screen["fields"]["value-step"] == ["1"]
    assert screen["fields"]["value-label"] == ["Count"]
    assert screen["fields"]["value-show_reset"] == ["on"]
    assert [b["text"] for b in screen["buttons"]] == ["Apply changes", "Save", "Apply changes"]

    response = submit(
        admin_client,
        screen,
        "Save",
        **{"value-step": "5", "value-label": "Clicks", "value-show_reset": None},
    )
    assert response.status_code == 302
    assert response.url == page_url(space_installation) + "#component-configuration"
    space_installation.refresh_from_db()
    assert space_installation.configuration == {"label": "Clicks", "step": 5, "show_reset": False}

    page = admin_client.get(page_url(space_installation))
    assert b"Saved." in page.content
    assert PageForms(page.content.decode()).component("configuration")["fields"]["value-step"] == [
        "5"
    ]


def test_inserted_blocks_keep_their_own_state(admin_client, space_installation):
    page = admin_client.get(page_url(space_installation)).content.decode()
    assert "A number that counts up each time you press Increment." in page
    insert = next(f for f in PageForms(page).forms if f["action"].endswith("/counter/insert/"))
    first = submit(admin_client, insert, "Insert preview")
    submit(admin_client, insert, "Insert preview")
    blocks = ComponentState.objects.filter(component_id="counter").order_by("created_at")
    rows = list(blocks)
    assert [row.state for row in rows] == [{"count": 0}, {"count": 0}]
    assert first.url.endswith(f"#component-{rows[0].instance}")

    for _ in range(2):
        forms = PageForms(admin_client.get(page_url(space_installation)).content.decode())
        submit(admin_client, forms.component(rows[0].instance), "Increment")
    assert [row.state for row in blocks.all()] == [
        {"count": 2},
        {"count": 0},
    ]
    page = admin_client.get(page_url(space_installation)).content.decode()
    assert "Count: 2" in page and "Count: 0" in page

    remove = next(
        f
        for f in PageForms(page).forms
        if f["action"].endswith("/counter/remove/")
        and f["fields"]["instance"] == [rows[1].instance]
    )
    submit(admin_client, remove, "Remove")
    assert list(blocks.values_list("instance", flat=True)) == [rows[0].instance]


HOSTILE = textwrap.dedent(
    """
    from docplatform_sdk import block, button, create_component, create_integration
    from docplatform_sdk import link, text

    def render(element, context):
        return block(
            text("<script>alert('text')</script>"),
            button('"><img src=x onerror=alert(1)>', on_press={"action": "go", "x": "</form>"}),
            link("Docs & more", "https://example.com/?a=1&b=<2>"),
        )

    def action(element, action, context):
        raise RuntimeError("this component always fails")

    integration = create_integration(
        components=[create_component("hostile", render=render, action=action)]
    )
    """
)


@pytest.fixture
def hostile_installation(runtime, org_admin, organization, tmp_path):
    manifest = {
        "name": "hostile",
        "title": "Hostile",
        "description": "Markup that tries to escape.",
        "organization": "acme",
        "visibility": "public",
        "scopes": [],
        "script": "main.py",
        "configurations": {"account": {"componentId": "hostile"}},
    }
    (tmp_path / "service-manifest.yaml").write_text(yaml.safe_dump(manifest))
    (tmp_path / "main.py").write_text(HOSTILE)
    integration = integration_publish_folder(path=tmp_path, publisher=org_admin).version.integration
    return installation_create(user=org_admin, integration=integration, organization=organization)


def test_markup_is_escaped_and_failures_are_shown(admin_client, hostile_installation):
    page = admin_client.get(page_url(hostile_installation)).content.decode()
    assert "<script>alert" not in page and "<img src=x" not in page
    assert "&lt;script&gt;alert(&#x27;text&#x27;)&lt;/script&gt;" in page
    assert 'href="https://example.com/?a=1&amp;b=&lt;2&gt;"' in page
    screen = PageForms(page).component("configuration")
    pressed = submit(admin_client, screen, '"><img src=x onerror=alert(1)>')
    assert pressed.status_code == 302
    page = admin_client.get(page_url(hostile_installation)).content.decode()
    assert "The &#x27;go&#x27; action failed: the integration raised an error." in page
    assert ComponentState.objects.get().state == {}

    installation_pause(user=OPERATOR, installation=hostile_installation)
    page = admin_client.get(page_url(hostile_installation)).content.decode()
    assert "could not be shown: the installation is paused." in page


def test_other_organizations_and_unknown_blocks_get_404(
    client, globex_member, admin_client, space_installation
):
    actions = reverse(
        "marketplace:component-actions", args=["acme", space_installation.pk, "counter"]
    )
    client.force_login(globex_member)
    assert (
        client.post(actions, {"instance": "x", "press": '{"action": "increment"}'}).status_code
        == 404
    )
    not_a_block = reverse(
        "marketplace:block-insert", args=["acme", space_installation.pk, "counter-settings"]
    )
    assert admin_client.post(not_a_block).status_code == 404
    assert not ComponentState.objects.exists()
