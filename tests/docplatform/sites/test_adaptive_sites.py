"""Adaptive content on published sites: a page whose condition does not hold for the visitor's
claims is the site's 404, out of the navigation, previous/next and search; adaptive sections
are shown only where their conditions hold, and search never finds or quotes a hidden one.

Claims are given explicitly to the services (``reading.showing.shown_page``,
``site_search``); through HTTP, a visitor without a visitor session has none ({})."""

import pytest

from docplatform.reading.showing import shown_page
from docplatform.sites.selectors import site_search

from .conftest import space_with

pytestmark = pytest.mark.django_db

PRO = 'visitor.claims.plan == "pro"'


def page_for_visitor(space, path, claims):
    """The page as a visitor with ``claims`` is shown it, with its frame (no block here)."""
    return shown_page(space, path, claims=claims, prefix="/p/", place=lambda path: None)


def frame(shown) -> dict:
    return shown.frame(content="")


PAGES = [
    {"path": "intro", "title": "Introduction", "body": "Welcome aboard."},
    {"path": "pro", "title": "Pro features", "body": "Zeppelin exports.", "condition": PRO},
    {"path": "pro/limits", "title": "Limits", "body": "Quota details."},
    {
        "path": "setup",
        "title": "Setup",
        "body": (
            "Install the agent.\n\n"
            f"```adaptive {PRO}\n## Pro tuning\n\nSet the walrus option.\n```\n\n"
            '```adaptive visitor.claims.plan == "free"\nUpgrade for walrus tuning.\n```\n'
        ),
    },
]


@pytest.fixture
def guide(organization, site):
    space = space_with(organization, "Guide", "public", PAGES)
    site.spaces.add(space)
    return space


def paths(items) -> list[str]:
    return [item.path for item in items]


def test_a_conditioned_page_is_the_same_404_as_a_missing_one_for_an_anonymous_visitor(
    visitor, site, guide
):
    missing = visitor.get(f"/{site.pk}/{guide.pk}/no-such-page")
    hidden = visitor.get(f"/{site.pk}/{guide.pk}/pro")
    assert hidden.status_code == missing.status_code == 404
    assert hidden.content == missing.content
    assert "Zeppelin" not in hidden.content.decode()
    # Its feedback is refused as for a missing page.
    feedback = visitor.post(f"/{site.pk}/{guide.pk}/-/feedback", {"page": "pro", "rating": "good"})
    assert feedback.status_code == 400
    assert "no such page" in feedback.content.decode()


def test_anonymous_visitors_see_neither_the_page_in_navigation_nor_hidden_sections(
    visitor, site, guide
):
    intro = visitor.get(f"/{site.pk}/{guide.pk}/intro").content.decode()
    assert "Pro features" not in intro
    # The page under the hidden one takes its place, and previous/next skip the hidden one.
    assert f'href="/{site.pk}/{guide.pk}/pro/limits"' in intro
    limits = visitor.get(f"/{site.pk}/{guide.pk}/pro/limits").content.decode()
    assert f'class="doc-pager-prev" href="/{site.pk}/{guide.pk}/intro"' in limits
    setup = visitor.get(f"/{site.pk}/{guide.pk}/setup")
    html = setup.content.decode()
    assert "Install the agent." in html
    assert "walrus option" not in html and "Pro tuning" not in html
    assert "Upgrade for walrus" not in html  # plan == "free" does not hold without claims
    assert "dp-section" not in html and "Shown when" not in html
    assert setup["Cache-Control"] == "private, no-cache"


def test_a_pro_visitor_gets_the_page_and_its_sections(guide):
    shown = page_for_visitor(guide, "pro", {"plan": "pro"})
    assert shown is not None and shown.page.title == "Pro features"
    assert paths(frame(shown)["roots"]) == ["intro", "pro", "setup"]
    assert (frame(shown)["previous"].path, frame(shown)["next"].path) == ("intro", "pro/limits")
    setup = page_for_visitor(guide, "setup", {"plan": "pro"})
    html = setup.document.with_blocks({})
    assert "walrus option" in html and "Upgrade" not in html
    assert [heading.text for heading in setup.document.headings] == ["Pro tuning"]
    free = page_for_visitor(guide, "setup", {"plan": "free"})
    assert "Upgrade for walrus tuning." in free.document.with_blocks({})
    assert "walrus option" not in free.document.with_blocks({})


def test_other_visitors_are_refused_the_page_and_navigate_around_it(guide):
    for claims in ({}, {"plan": "free"}, {"plan": ["pro"]}, {"plan": "PRO"}):
        assert page_for_visitor(guide, "pro", claims) is None, claims
        limits = page_for_visitor(guide, "pro/limits", claims)
        assert paths(frame(limits)["roots"]) == ["intro", "pro/limits", "setup"]
        assert (frame(limits)["previous"].path, frame(limits)["next"].path) == ("intro", "setup")


def test_the_first_page_of_a_space_is_the_first_the_visitor_may_see(organization, site):
    space = space_with(
        organization,
        "Gated",
        "public",
        [
            {"path": "secret", "title": "Secret", "body": "Only pros.", "condition": PRO},
            {"path": "open", "title": "Open", "body": "For all."},
        ],
    )
    assert page_for_visitor(space, None, {}).page.path == "open"
    assert page_for_visitor(space, None, {"plan": "pro"}).page.path == "secret"


def test_search_finds_no_hidden_page_and_no_hidden_section(site, guide):
    def found(query, claims):
        return [(hit.page.path, "".join(hit.snippet)) for hit in site_search(site, query, claims)]

    assert found("zeppelin", {}) == []
    assert found("zeppelin", {"plan": "free"}) == []
    assert [path for path, _ in found("zeppelin", {"plan": "pro"})] == ["pro"]
    # A hidden section's words find nothing, and no snippet quotes it.
    assert found("walrus option", {}) == []
    assert [path for path, _ in found("walrus option", {"plan": "pro"})] == ["setup"]
    for _, snippet in found("agent", {}) + found("agent", {"plan": "free"}):
        assert "walrus option" not in snippet
    assert any("walrus option" in snippet for _, snippet in found("agent", {"plan": "pro"}))
    # A word in both a shown and a hidden section finds the page for the shown one only.
    assert [path for path, _ in found("walrus", {"plan": "free"})] == ["setup"]


def test_the_search_page_of_an_anonymous_visitor_finds_no_hidden_content(visitor, site, guide):
    for query in ("zeppelin", "walrus option"):
        html = visitor.get(f"/{site.pk}/search", {"q": query}).content.decode()
        assert "Pro features" not in html and "Setup" not in html
        assert "Zeppelin exports" not in html and "Set the walrus option" not in html
    found = visitor.get(f"/{site.pk}/search", {"q": "agent"}).content.decode()
    assert "Setup" in found and "walrus" not in found
