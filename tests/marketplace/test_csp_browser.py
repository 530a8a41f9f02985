"""The Content-Security-Policy in a real browser: the marketplace, the admin and the API
docs work under it with no violation, and markup that tries to run inline script does not."""

import io

import pytest
from django.contrib.auth import get_user_model
from django.core.management import call_command

from integrations.models import Installation

pytestmark = pytest.mark.slow

VIOLATIONS = """
window.__cspViolations = [];
document.addEventListener("securitypolicyviolation", (event) => {
  window.__cspViolations.push(`${event.violatedDirective} ${event.blockedURI}`);
});
"""


def violations(page) -> list[str]:
    return page.evaluate("window.__cspViolations")


def sign_in(page, username: str) -> None:
    page.fill("input[name=username]", username)
    page.fill("input[name=password]", "demo-password")
    page.click("[type=submit]")
    page.wait_for_load_state()


def visit(page, url: str, *, ready: str) -> None:
    page.goto(url)
    page.wait_for_selector(ready)
    assert violations(page) == [], url


def test_the_platforms_pages_work_under_the_policy(live_server, browser_page):
    call_command("seed_demo", stdout=io.StringIO())
    page = browser_page
    page.add_init_script(VIOLATIONS)
    base = live_server.url

    visit(page, f"{base}/marketplace/login/", ready="h1:has-text('Sign in')")
    policy = page.request.get(f"{base}/marketplace/login/").headers["content-security-policy"]
    assert "script-src 'self'" in policy and "unsafe-inline" not in policy
    sign_in(page, "alice")

    visit(page, f"{base}/marketplace/orgs/acme/", ready="h1:has-text('Integrations')")
    page.wait_for_load_state("load")  # every image (none is lazy here) loaded or failed
    assert page.evaluate("Array.from(document.images).every(i => i.complete && i.naturalWidth)")
    visit(page, f"{base}/marketplace/orgs/acme/integrations/page-analytics/", ready="h1")
    installation = Installation.objects.filter(organization__subdomain="acme").first()
    if installation is not None:
        visit(page, f"{base}/marketplace/orgs/acme/installations/{installation.pk}/", ready="h1")
    page.click("button:has-text('Sign out')")

    # The admin's scripts are files of its own: a change form runs them under the policy
    # (the group and permission pickers are drawn by its JavaScript).
    visit(page, f"{base}/admin/login/", ready="#login-form")
    sign_in(page, "admin")
    visit(page, f"{base}/admin/", ready="#site-name")
    admin = get_user_model().objects.get(username="admin")
    visit(page, f"{base}/admin/auth/user/{admin.pk}/change/", ready=".selector")

    # The API docs: Swagger UI draws the operations from the schema.
    visit(page, f"{base}/api/docs/", ready=".opblock")

    # Markup that sneaks in an inline handler or script runs nothing.
    page.goto(f"{base}/marketplace/orgs/acme/")
    page.evaluate(
        """() => {
          document.body.insertAdjacentHTML("beforeend",
            '<img src="/static/none.png" onerror="window.__ran = 1">');
          const script = document.createElement("script");
          script.textContent = "window.__ran = 2";
          document.body.appendChild(script);
        }"""
    )
    page.wait_for_function("window.__cspViolations.length >= 2")
    assert page.evaluate("window.__ran") is None
    assert all(entry.startswith("script-src") for entry in violations(page))
