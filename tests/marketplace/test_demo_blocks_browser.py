"""The demo's quick insert menu in a real browser (Playwright, Debian's Chromium): seed_demo
installs a block integration and publishes an OpenAPI document, so the menu has entries;
its empty state links to where blocks come from."""

import io

import pytest
from django.core.management import call_command

from docplatform.models import Space

pytestmark = pytest.mark.slow


def open_the_menu(page, live_server):
    space = Space.objects.get(organization__subdomain="acme", title="Product guide")
    page.goto(f"{live_server.url}/s/{space.pk}/faq/edit")
    page.fill("input[name=username]", "alice")
    page.fill("input[name=password]", "demo-password")
    page.click("button:has-text('Sign in')")
    page.get_by_role("button", name="Insert", exact=True).click()
    page.wait_for_selector("[data-quick-insert-search]")


def test_the_demos_quick_insert_menu_has_a_block_and_openapi_operations(
    live_server,
    browser_page,
):
    call_command("seed_demo", stdout=io.StringIO())
    page = browser_page
    open_the_menu(page, live_server)

    titles = page.locator("[data-quick-insert-list] .qi-title").all_inner_texts()
    assert "Counter" in titles
    assert any("/widgets" in title for title in titles), titles

    page.fill("[data-quick-insert-search]", "no such block at all")
    empty = page.locator("[data-quick-insert-empty]")
    assert empty.is_visible()
    openapi = empty.locator("a.quick-insert-openapi").get_attribute("href")
    assert openapi == "/api/v1/orgs/acme/openapi/"
    empty.locator("a.quick-insert-catalogue").click()
    page.wait_for_selector("h1:has-text('Integrations')")
    assert page.locator(".card h2").all_inner_texts() == ["Quick insert counter"]
    assert page.is_checked("input[name=blocks]")
    response = page.goto(f"{live_server.url}{openapi}")
    assert response.status == 200
    assert "acme-api" in page.content()
