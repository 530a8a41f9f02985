"""Every marketplace page fits a phone (420 px: nothing wider than the window, the top bar
folded into a menu) and keeps its layout at 1280 px. Screenshots of each page at both widths
land in ``<temp>/docplatform-layout/`` for a look (not committed)."""

import io
import tempfile
from pathlib import Path

import pytest
from django.contrib.auth import get_user_model
from django.core.management import call_command

from docplatform.events.models import Delivery
from docplatform.gitsync.services import git_connection_set
from docplatform.models import Site, Space
from integrations.models import Installation, Integration
from integrations.operators import OPERATOR
from integrations.services.installations import installation_create
from webhooks.services.ping import webhook_ping_send

pytestmark = pytest.mark.slow

SCREENSHOTS = Path(tempfile.gettempdir()) / "docplatform-layout"
PHONE, DESKTOP = 420, 1280


def webhook_with_a_delivery(receiver_url: str) -> Installation:
    """The demo, with a webhook installed in one of acme's spaces and a ping delivered to it."""
    alice = get_user_model().objects.get(username="alice")
    space = Space.objects.filter(organization__subdomain="acme").first()
    webhook = installation_create(
        user=alice,
        integration=Integration.objects.get(name="webhook"),
        organization=space.organization,
        space=space,
        configuration={"url": receiver_url, "space_content_updated": True},
    )
    webhook_ping_send(user=OPERATOR, installation=webhook)
    return webhook


def git_connected_and_analytics_installed(space: Space, folder: Path) -> None:
    """The space connected to a repository with a long path (the Git settings show it), and
    page analytics installed in it (the integration's Logs page offers its installations)."""
    alice = get_user_model().objects.get(username="alice")
    repository = folder / "acme-corporation-documentation-product-guide-and-api-reference.git"
    git_connection_set(space=space, url=str(repository), branch="main", user=alice)
    site = Site.objects.filter(organization__subdomain="acme").first()
    installation_create(
        user=alice,
        integration=Integration.objects.get(name="page-analytics"),
        organization=space.organization,
        site=site,
    )


def pages_of_the_demo(webhook: Installation) -> dict[str, str]:
    """Every kind of marketplace page alice (admin of acme) opens, by a name."""
    space = webhook.space
    base = f"/marketplace/orgs/acme/installations/{webhook.pk}"
    delivery = Delivery.objects.filter(installation=webhook).first()
    return {
        "catalogue": "/marketplace/orgs/acme/",
        "integration": "/marketplace/orgs/acme/integrations/page-analytics/",
        "integration-logs": "/marketplace/orgs/acme/integrations/page-analytics/logs/",
        "integration-logs-filtered": "/marketplace/orgs/acme/integrations/page-analytics/logs/"
        "?kind=event&outcome=error&since=2h",
        "installations": "/marketplace/orgs/acme/installations/",
        "developer-settings": "/marketplace/settings/developer/",
        "spaces": "/s/",
        "reader": f"/s/{space.pk}/",
        "editor": f"/s/{space.pk}/{space.current_revision.pages.first().path}/edit",
        "history": f"/s/{space.pk}/history",
        "space-settings": f"/s/{space.pk}/settings",
        "not-found": "/marketplace/no-such-page/",
        "install-link": "/marketplace/install/page-analytics/",
        "installation": f"{base}/",
        "installation-logs": f"{base}/logs/",
        "installation-logs-filtered": f"{base}/logs/?kind=event&outcome=ok&since=7d",
        "uninstall": f"{base}/uninstall/",
        "deliveries": f"{base}/deliveries/",
        "delivery": f"{base}/deliveries/{delivery.pk}/",
        "rotate-secret": f"{base}/webhook/rotate-secret/",
    }


#: Each visible element that reaches past the window's right edge, or whose content spills out
#: of its box, unless it is inside a box that scrolls or clips across (a wide table's wrapper).
OVERFLOWING = """() => {
  const width = document.documentElement.clientWidth;
  const name = (element) => element.tagName.toLowerCase() + (element.id ? "#" + element.id : "")
    + (typeof element.className === "string" && element.className.trim()
       ? "." + element.className.trim().split(/\\s+/).join(".") : "");
  const clipped = (element) => {
    for (let box = element.parentElement; box && box !== document.body; box = box.parentElement) {
      if (getComputedStyle(box).overflowX !== "visible") return true;
    }
    return false;
  };
  const found = [];
  for (const element of document.body.querySelectorAll("*")) {
    const style = getComputedStyle(element);
    const rect = element.getBoundingClientRect();
    if (style.visibility === "hidden" || rect.width === 0 || rect.height === 0) continue;
    if (clipped(element)) continue;
    if (rect.right > width + 1) {
      found.push(name(element) + " spans " + Math.round(rect.left) + ".." + Math.round(rect.right));
    } else if (style.overflowX === "visible" && element.clientWidth > 0
               && element.scrollWidth > element.clientWidth + 1) {
      found.push(name(element) + " holds " + element.scrollWidth + " px in " + element.clientWidth);
    }
  }
  return found;
}"""


def overflowing(page) -> list[str]:
    return page.evaluate(OVERFLOWING)


def width_of(page) -> int:
    return page.evaluate(
        "Math.max(document.documentElement.scrollWidth, document.body.scrollWidth)"
    )


@pytest.mark.usefixtures("webhook_settings")
def test_every_page_fits_a_phone_and_keeps_its_layout_on_a_desktop(
    live_server,
    browser_page,
    receiver,
    settings,
    tmp_path,
):
    settings.GIT_SYNC_ALLOWED = [str(tmp_path / "*")]
    call_command("seed_demo", stdout=io.StringIO())
    webhook = webhook_with_a_delivery(receiver.url)
    git_connected_and_analytics_installed(webhook.space, tmp_path)
    SCREENSHOTS.mkdir(exist_ok=True)
    page = browser_page
    page.goto(f"{live_server.url}/marketplace/login/")
    page.set_viewport_size({"width": PHONE, "height": 900})
    assert width_of(page) <= PHONE
    page.screenshot(path=SCREENSHOTS / f"login-{PHONE}.png", full_page=True)
    page.fill("input[name=username]", "alice")
    page.fill("input[name=password]", "demo-password")
    page.click("[type=submit]")
    page.wait_for_load_state()

    too_wide, spilling = {}, {}
    for name, path in pages_of_the_demo(webhook).items():
        for width in (PHONE, DESKTOP):
            page.set_viewport_size({"width": width, "height": 900})
            page.goto(live_server.url + path)
            page.wait_for_load_state()
            page.screenshot(path=SCREENSHOTS / f"{name}-{width}.png", full_page=True)
            if width_of(page) > width:
                too_wide[f"{name} at {width}"] = width_of(page)
            menu = page.locator(".menu-toggle")
            if width == PHONE and (found := overflowing(page)):
                spilling[name] = found
            if width == PHONE:
                # The top bar is folded: its links show once the menu is opened.
                assert menu.is_visible(), name
                assert not page.locator(".main-nav").is_visible(), name
                menu.click()
                assert page.locator(".main-nav").is_visible(), name
                assert width_of(page) <= width, name
            else:
                assert not menu.is_visible(), name
                assert page.locator(".main-nav").is_visible(), name
                brand = page.locator(".brand").bounding_box()
                nav = page.locator(".main-nav").bounding_box()
                assert abs(brand["y"] - nav["y"]) < 20, name  # one row, as before
    assert too_wide == {}
    assert spilling == {}


def test_an_admins_top_bar_stays_inside_a_desktop_window(live_server, browser_page):
    """Every link an admin has (Conversations, Audit log, the organization menu) and a long
    name: the top bar wraps inside its box instead of running past the window."""
    from tests.factories import MembershipFactory, OrganizationFactory

    organization = OrganizationFactory(subdomain="acme", title="Acme Incorporated Worldwide")
    admin = MembershipFactory(organization=organization, role="admin").user
    admin.username = "alexandra.konstantinopoulou-featherstonehaugh"
    admin.set_password("a long enough password")
    admin.save()
    page = browser_page
    page.set_viewport_size({"width": DESKTOP, "height": 900})
    page.goto(f"{live_server.url}/marketplace/login/")
    page.fill("input[name=username]", admin.username)
    page.fill("input[name=password]", "a long enough password")
    page.click("[type=submit]")
    page.wait_for_load_state()
    page.goto(f"{live_server.url}/marketplace/orgs/acme/")
    outside = page.evaluate(
        """() => {
            const box = document.querySelector('.topbar-inner').getBoundingClientRect();
            return [...document.querySelectorAll('.topbar-inner *')]
                .filter(e => e.offsetParent !== null)
                .filter(e => e.getBoundingClientRect().right > box.right + 0.5)
                .map(e => e.tagName + '.' + e.className);
        }"""
    )
    assert outside == []
    assert width_of(page) <= DESKTOP
