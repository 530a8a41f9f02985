"""The editor's preview "as a visitor with these claims", in a real browser: typing claims
shows the page as such a visitor sees it; a condition that hides the page says so; bad JSON
is named."""

import pytest

from .test_documents_browser import accept_leaving, sign_in

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]

BODY = 'Everyone reads this.\n\n```adaptive visitor.claims.plan == "pro"\nThe pro export.\n```\n'


@pytest.fixture
def space_spec(alice):
    return {
        "title": "Handbook",
        "pages": [{"path": "reports", "title": "Reports", "body": BODY}],
        "author": alice,
    }


def test_the_preview_as_a_visitor_with_typed_claims(live_server, browser_page, alice, space):
    page = browser_page
    accept_leaving(page)
    sign_in(page, live_server, alice, then=f"/s/{space.pk}/reports/edit")
    preview = page.locator("[data-preview]")
    preview.locator(".adaptive-condition", has_text="visitor.claims.plan").wait_for()

    claims = page.locator("#id_claims")
    claims.fill('{"plan": "free"}')
    page.locator("[data-preview]:not(:has-text('The pro export.'))").wait_for()
    assert "Everyone reads this." in preview.inner_text()

    claims.fill('{"plan": "pro"}')
    preview.get_by_text("The pro export.").wait_for()
    assert preview.locator(".adaptive-condition").count() == 0

    page.locator("#id_condition").fill('visitor.claims.plan == "team"')
    preview.get_by_text("does not see this page").wait_for()

    claims.fill("{plan: pro")
    preview.get_by_text("claims: is not valid JSON").wait_for()
