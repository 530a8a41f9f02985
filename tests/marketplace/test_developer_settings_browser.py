"""Developer settings and new permissions in a real browser (Playwright, Debian's Chromium),
against a live server: a token made on the page works once shown and is never shown again;
an admin approves the new permissions an integration asks for."""

import pytest
import requests

from docplatform.models import ApiToken
from integrations.models import Installation
from integrations.services.installations import installation_create
from tests.api_helpers import publish_integration
from tests.factories import MembershipFactory, OrganizationFactory

pytestmark = pytest.mark.slow


def sign_in(page, live_server, username: str) -> None:
    page.goto(f"{live_server.url}/marketplace/login/")
    page.fill("input[name=username]", username)
    page.fill("input[name=password]", "password")
    page.click("button:has-text('Sign in')")
    page.wait_for_selector("a:has-text('Developer settings')")


def me(live_server, token: str) -> requests.Response:
    return requests.get(
        f"{live_server.url}/api/v1/me/", headers={"Authorization": f"Bearer {token}"}, timeout=10
    )


@pytest.mark.django_db(transaction=True)
def test_a_token_made_in_developer_settings_works_and_is_never_shown_again(
    live_server,
    browser_page,
):
    user = MembershipFactory(organization=OrganizationFactory(subdomain="acme")).user
    page = browser_page
    sign_in(page, live_server, user.username)

    page.click("a:has-text('Developer settings')")
    page.wait_for_selector("h1:has-text('Developer settings')")
    page.fill("input[name=name]", "my laptop")
    page.select_option("select[name=expiration]", "90")
    page.click("button:has-text('Make token')")

    page.wait_for_selector(".new-token .token-value")
    token = page.inner_text(".new-token .token-value").strip()
    assert token.startswith("dpt_")
    assert "Copy it now: it is not shown again." in page.inner_text(".new-token")
    page.context.grant_permissions(["clipboard-read", "clipboard-write"])
    page.click(".new-token button:has-text('Copy')")
    page.wait_for_selector(".new-token button:has-text('Copied')")
    assert page.evaluate("navigator.clipboard.readText()") == token
    answer = me(live_server, token)
    assert answer.status_code == 200
    assert answer.json()["username"] == user.username

    # Opened again, and after a reload of the answer that showed it: listed, never shown.
    page.goto(f"{live_server.url}/marketplace/settings/developer/")
    assert page.locator(".new-token").count() == 0
    assert token not in page.content()
    assert "my laptop" in page.inner_text(".tokens")
    stored = ApiToken.objects.get(user=user)
    assert f"…{stored.hint}" in page.inner_text(".tokens")
    page.go_back()
    page.reload()
    assert token not in page.content()
    assert ApiToken.objects.filter(user=user).count() == 1

    page.goto(f"{live_server.url}/marketplace/settings/developer/")
    page.click("button.revoke")
    page.wait_for_selector(".messages:has-text('is revoked')")
    assert me(live_server, token).status_code == 401


@pytest.mark.django_db(transaction=True)
def test_an_admin_approves_new_permissions_in_the_marketplace(
    live_server,
    browser_page,
    tmp_path,
):
    acme = OrganizationFactory(subdomain="acme", title="Acme")
    admin = MembershipFactory(organization=acme, role="admin").user
    folder = tmp_path / "reader"
    integration = publish_integration(folder, admin, name="reader", scopes=["space:metadata:read"])
    installation = installation_create(user=admin, integration=integration, organization=acme)
    publish_integration(  # version 2 asks for more
        folder, admin, name="reader", scopes=["space:metadata:read", "space:content:read"]
    )

    page = browser_page
    sign_in(page, live_server, admin.username)
    page.goto(f"{live_server.url}/marketplace/orgs/acme/installations/{installation.pk}/")
    notice = page.inner_text(".new-permissions")
    assert "asks for new permissions" in notice
    assert "Read the content of your spaces" in notice

    page.click("button:has-text('Approve new permissions')")
    page.wait_for_selector(".messages:has-text('Approved')")
    assert page.locator(".new-permissions").count() == 0
    assert "Read the content of your spaces" in page.inner_text(".scopes.granted")
    installation = Installation.objects.get(pk=installation.pk)
    assert installation.granted_scopes == ["space:metadata:read", "space:content:read"]
