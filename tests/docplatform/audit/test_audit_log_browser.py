"""The Audit log page in a real browser: on a phone (420 px) nothing is wider than the
window, however long a row's words; the filters work from the form. Screenshots at both
widths land in ``<temp>/docplatform-layout/`` for a look (not committed)."""

import tempfile
from pathlib import Path

import pytest

from docplatform.audit.models import AuditEntry
from docplatform.audit.services import audit_record

pytestmark = pytest.mark.slow

SCREENSHOTS = Path(tempfile.gettempdir()) / "docplatform-layout"
PHONE, DESKTOP = 420, 1280


def width_of(page) -> int:
    return page.evaluate(
        "Math.max(document.documentElement.scrollWidth, document.body.scrollWidth)"
    )


def log_overflows(page) -> bool:
    """Whether the log's panel holds something wider than itself (the top bar, shared by
    every page, is the layout test's: ``tests/marketplace/test_layout_browser.py``)."""
    return page.evaluate(
        "(() => { const panel = document.querySelector('.audit-log').closest('.panel');"
        " return panel.scrollWidth > panel.clientWidth"
        " || panel.getBoundingClientRect().right > window.innerWidth; })()"
    )


@pytest.fixture
def long_rows(log, installation, org_admin):
    entry = audit_record(
        action="webhook.url_changed",
        actor=org_admin,
        target=installation,
        target_label="https://hooks.example.com/" + "a-very-long-path-segment/" * 6,
        details={"properties": ["url", "events", "space_content_updated", "secret_rotated"]},
    )
    AuditEntry.objects.filter(pk=entry.pk).update(address="2001:db8:85a3::8a2e:370:7334")


@pytest.mark.usefixtures("long_rows")
def test_the_log_fits_a_phone_and_filters_from_the_form(
    live_server,
    browser_page,
    org_admin,
):
    page = browser_page
    page.goto(f"{live_server.url}/marketplace/login/")
    page.fill("input[name=username]", org_admin.username)
    page.fill("input[name=password]", "password")
    page.click("[type=submit]")
    page.wait_for_load_state()

    SCREENSHOTS.mkdir(exist_ok=True)
    for width in (PHONE, DESKTOP):
        page.set_viewport_size({"width": width, "height": 900})
        page.goto(f"{live_server.url}/orgs/acme/audit-log/")
        page.screenshot(path=SCREENSHOTS / f"audit-log-{width}.png", full_page=True)
        assert page.locator(".audit-log tbody tr").count() == 6
        assert not log_overflows(page), width
        if width == PHONE:  # the top bar is folded into its menu: the whole page fits
            assert width_of(page) <= PHONE

    page.select_option("select[name=action]", "invitation")
    page.click("button:has-text('Filter')")
    page.wait_for_load_state()
    actions = page.locator(".audit-log td.action").all_inner_texts()
    assert actions == ["invitation.revoked", "invitation.created"]
