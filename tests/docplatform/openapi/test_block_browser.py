"""The OpenAPI operation block in a real browser: inserted from the editor's quick insert
menu, previewed, saved and shown in the reader."""

import json
import re

import pytest

from docplatform.openapi.services import openapi_publish
from docplatform.reading.blocks import BUILTIN
from tests.docplatform.documents.test_documents_browser import sign_in

from .samples import PETSTORE_31

pytestmark = pytest.mark.slow


def test_insert_an_openapi_operation_from_the_quick_insert_menu(
    live_server, browser_page, organization, org_member, handbook
):
    openapi_publish(organization=organization, name="pets", content=PETSTORE_31, actor=org_member)
    space = handbook
    intro = space.current_revision.pages.get(path="intro").body
    page = browser_page
    alerts = []

    def on_dialog(dialog):
        if dialog.type == "alert":
            alerts.append(dialog.message)
            dialog.dismiss()

    page.on("dialog", on_dialog)
    sign_in(page, live_server, org_member, then=f"/s/{space.pk}/intro/edit")
    body = page.locator("#id_body")
    body.click()
    page.keyboard.press("Control+End")
    page.keyboard.press("Control+/")
    dialog = page.get_by_role("dialog", name="Quick insert")
    dialog.wait_for()
    page.keyboard.type("fetch one pet")
    option = dialog.get_by_role("option", name="GET /pets/{petId}")
    option.wait_for()
    assert dialog.get_by_role("option").count() == 1
    page.keyboard.press("Enter")
    dialog.wait_for(state="hidden")

    markdown = body.input_value()
    assert markdown.startswith(intro)
    fence = json.loads(markdown.split("```block\n", 1)[1].split("\n```", 1)[0])
    assert (fence["integration"], fence["block"], fence["props"]) == (
        BUILTIN,
        "openapi-operation",
        {"document": "pets", "operation": "GET /pets/{petId}"},
    )
    page.locator("[data-preview] .openapi-operation", has_text="Fetch one pet").wait_for()
    page.get_by_role("button", name="Save", exact=True).click()

    page.wait_for_url(re.compile(rf"/s/{space.pk}/intro$"))
    block = page.locator(".doc-body .openapi-operation")
    block.get_by_text("Fetch one pet").wait_for()
    assert block.locator(".openapi-path").inner_text() == "/pets/{petId}"
    assert alerts == []  # the document's script and onerror handler never ran
    assert page.locator(".doc-body script").count() == 0
