"""A published site visited in Chromium against the live server, on an origin of its own
(``sites.test``, resolved to the live server's address by Chromium itself), with a real webhook
receiver and a real Celery worker (skipped without Playwright or Chromium, as
tests/marketplace/test_browser.py is). A screenshot of a site's page lands in the system's
temporary folder."""

import json
import shutil
import tempfile
from pathlib import Path

import pytest
from django.db import connections

from docplatform.revisions import space_content_update
from integrations.models import Integration
from integrations.services.installations import installation_create
from tests.browser import CHROMIUM, CHROMIUM_ARGS
from tests.conftest import wait_until
from tests.docplatform.documents.test_documents_browser import (
    BROWSER_CHECK,
    HOSTILE_MARKDOWN,
    click_everything,
    sign_in,
)
from tests.factories import MembershipFactory, UserFactory

pytestmark = pytest.mark.slow


SITES_HOST = "sites.test"
SCREENSHOTS = Path(tempfile.gettempdir())


@pytest.fixture
def sites_origin(origins, live_server):
    """The live server as the sites origin too, under a third host name."""
    origins.SITES_URL = live_server.url.replace("://localhost:", f"://{SITES_HOST}:")
    origins.ALLOWED_HOSTS = [*origins.ALLOWED_HOSTS, SITES_HOST]
    return origins.SITES_URL


@pytest.fixture
def site_browser(monkeypatch):
    """A Chromium page that reaches ``sites.test`` at the live server's address."""
    sync_api = pytest.importorskip("playwright.sync_api")
    if not shutil.which(CHROMIUM):
        pytest.skip(f"Chromium is not installed at {CHROMIUM}")
    monkeypatch.setenv("DJANGO_ALLOW_ASYNC_UNSAFE", "true")
    rules = f"--host-resolver-rules=MAP {SITES_HOST} 127.0.0.1"
    with sync_api.sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=CHROMIUM, args=[*CHROMIUM_ARGS, rules, "--no-proxy-server"]
        )
        page = browser.new_page(viewport={"width": 1280, "height": 900})
        page.set_default_timeout(15_000)
        yield page
        browser.close()
        connections.close_all()


@pytest.fixture
def alice(organization):
    user = UserFactory(username="alice")
    return MembershipFactory(organization=organization, user=user, role="admin").user


def site_events(receiver, event_type: str) -> list[dict]:
    bodies = [json.loads(request.body) for request in receiver.requests]
    return [body for body in bodies if body["type"] == event_type]


def test_a_visitor_reads_searches_and_rates_a_published_site(
    sites_origin,
    live_server,
    celery_worker,
    webhook_settings,
    receiver,
    site_browser,
    alice,
    organization,
    site,
    handbook,
    private,
):
    webhook = installation_create(
        user=alice,
        integration=Integration.objects.get(name="webhook"),
        organization=organization,
        site=site,
        configuration={"url": receiver.url, "site_view": True, "page_feedback": True},
    )
    assert webhook.status == "active"
    page = site_browser
    # Signed in on the platform in the same browser: nothing of it reaches the site.
    sign_in(page, live_server, alice, then="/s/")
    platform_cookies = {c["name"] for c in page.context.cookies(live_server.url)}
    assert {"sessionid", "csrftoken"} <= platform_cookies
    sent_to_site = []
    page.on(
        "request",
        lambda request: (
            sent_to_site.append(request.header_value("cookie") or "")
            if request.url.startswith(sites_origin)
            else None
        ),
    )
    user_agent = page.evaluate("navigator.userAgent")

    page.goto(f"{sites_origin}/{site.pk}/")
    page.get_by_role("link", name="Handbook").click()
    page.locator("h1.doc-title", has_text="Introduction").wait_for()
    intro_url = f"{sites_origin}/{site.pk}/{handbook.pk}/intro"

    def viewed(url):
        return lambda: any(body["url"] == url for body in site_events(receiver, "site_view"))

    wait_until(viewed(intro_url), timeout=30)
    [view] = [body for body in site_events(receiver, "site_view") if body["url"] == intro_url]
    assert view["siteId"] == site.pk and view["installationId"] == webhook.id
    assert view["visitor"]["userAgent"] == user_agent
    assert view["visitor"]["cookies"] == {}
    assert page.evaluate("document.cookie") == ""  # the visitor cookie is HttpOnly

    # Search for a word of a page and open the hit.
    page.get_by_role("searchbox", name="Search this site").fill("installer")
    page.get_by_role("button", name="Search").click()
    page.locator(".search-hits mark", has_text="installer").wait_for()
    page.get_by_role("link", name="Install", exact=True).click()
    page.locator("h1.doc-title", has_text="Install").wait_for()
    install_url = f"{sites_origin}/{site.pk}/{handbook.pk}/guide/install"
    assert page.url == install_url
    wait_until(viewed(install_url), timeout=30)

    # Rate it "bad" with a comment, then change it to "good": no reload, a webhook each.
    page.evaluate("window.__marker = 1")
    page.get_by_label("Comment").fill("Which installer? <b>Say</b> the name.")
    page.get_by_role("button", name="Bad").click()
    status = page.locator("[data-feedback-status]")
    status.get_by_text("you rated this page “Bad”").wait_for()
    assert status.inner_text().endswith("Your comment: Which installer? <b>Say</b> the name.")
    wait_until(lambda: len(site_events(receiver, "page_feedback")) == 1, timeout=30)
    page.get_by_role("button", name="Good").click()
    status.get_by_text("you rated this page “Good”").wait_for()
    assert page.get_by_role("button", name="Good").get_attribute("aria-pressed") == "true"
    assert page.get_by_role("button", name="Bad").get_attribute("aria-pressed") == "false"
    wait_until(lambda: len(site_events(receiver, "page_feedback")) == 2, timeout=30)
    assert page.evaluate("window.__marker") == 1
    install = handbook.current_revision.pages.get(path="guide/install")
    first, second = site_events(receiver, "page_feedback")
    comment = "Which installer? <b>Say</b> the name."
    assert first["feedback"] == {"rating": "bad", "comment": comment}
    assert second["feedback"] == {"rating": "good", "comment": comment}
    for body in (first, second):
        assert (body["pageId"], body["spaceId"], body["url"]) == (
            install.pk,
            handbook.pk,
            install_url,
        )
        assert body["visitor"]["userAgent"] == user_agent
    page.screenshot(path=str(SCREENSHOTS / "site-page-1280.png"), full_page=True)

    # A private space's pages are not there.
    for address in (f"/{site.pk}/{private.pk}/", f"/{site.pk}/{private.pk}/plans"):
        response = page.goto(sites_origin + address)
        assert response.status == 404
        assert "Internal roadmap" not in page.content()

    assert sent_to_site
    for cookies in sent_to_site:
        assert "sessionid" not in cookies and "csrftoken" not in cookies, cookies
    assert {c["name"] for c in page.context.cookies(sites_origin)} == {"dp_visitor"}
    page.goto(f"{live_server.url}/s/")  # still signed in on the platform
    page.get_by_role("button", name="Sign out").wait_for()


def test_hostile_content_stays_inert_in_the_browser_on_the_site(
    sites_origin, live_server, site_browser, site, handbook
):
    space_content_update(
        space=handbook,
        pages=[{"path": "intro", "title": "<b onmouseover=x>Intro</b>", "body": HOSTILE_MARKDOWN}],
    )
    context = site_browser.context.browser.new_context(bypass_csp=True)
    page = context.new_page()
    page.set_default_timeout(15_000)
    dialogs = []
    page.on("dialog", lambda dialog: (dialogs.append(dialog.message), dialog.dismiss()))
    context.on("page", lambda popup: popup.close())
    address = f"{sites_origin}/{site.pk}/{handbook.pk}/intro"
    page.goto(address)
    page.locator(".doc-body", has_text="<script>window.__pwned=1</script>").wait_for()
    assert page.evaluate(BROWSER_CHECK) == []
    click_everything(page, address, ".doc-body a")
    for query in ("<script>window.__pwned=1</script>", "hostile"):
        page.goto(f"{sites_origin}/{site.pk}/search?q={query}")
        assert page.evaluate(BROWSER_CHECK) == []
    assert page.evaluate("typeof window.__pwned") == "undefined"
    assert dialogs == []
    context.close()
