"""The example's configuration screen and counter block, clicked through in Chromium
(skipped without Playwright or Chromium, as tests/marketplace/test_browser.py is)."""

import tempfile
from pathlib import Path

import pytest

from integrations.models import ComponentState
from integrations.services import integration_publish_folder
from integrations.services.installations import installation_create
from tests.factories import SpaceFactory

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "quick-insert-counter"

pytestmark = pytest.mark.slow


def test_configure_the_counters_then_press_an_inserted_block(
    runtime, live_server, browser_page, org_admin, organization
):
    counter = integration_publish_folder(path=EXAMPLE, publisher=org_admin).version.integration
    installation = installation_create(
        user=org_admin,
        integration=counter,
        organization=organization,
        space=SpaceFactory(organization=organization, title="Handbook"),
    )
    page = browser_page
    page.goto(f"{live_server.url}/marketplace/orgs/acme/installations/{installation.pk}/")
    page.fill("input[name=username]", org_admin.username)
    page.fill("input[name=password]", "password")
    page.click("button:has-text('Sign in')")

    screen = page.locator("#component-configuration")
    screen.locator("select[name=value-step]").select_option("2")
    screen.locator("button:has-text('Save')").click()
    page.wait_for_selector("#component-configuration :text('Saved.')")
    installation.refresh_from_db()
    assert installation.configuration["step"] == 2

    page.click("button:has-text('Insert preview')")
    preview = page.locator(".block-preview .component")
    preview.locator(":text('Count: 0')").wait_for()
    preview.locator("button:has-text('Increment')").click()
    page.locator(".block-preview :text('Count: 2')").wait_for()
    page.screenshot(path=str(Path(tempfile.gettempdir()) / "marketplace-components.png"))
    assert ComponentState.objects.get(component_id="counter").state == {"count": 2}
