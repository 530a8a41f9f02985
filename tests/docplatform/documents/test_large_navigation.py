"""A space larger than the navigation shown whole (``nav_html.WHOLE_UP_TO``): each page shows
the top of the tree and its own branch, in the reader and on the site, and the page before
and after it in reading order."""

import pytest
from django.test import Client

from docplatform.reading.nav_html import WHOLE_UP_TO
from docplatform.revisions import space_content_update
from tests.factories import SiteFactory, SpaceFactory

SECTIONS, PER_SECTION = 5, 60


@pytest.fixture
def large(organization):
    space = SpaceFactory(organization=organization, visibility="public")
    pages = []
    for section in range(SECTIONS):
        pages.append({"path": f"s{section}", "title": f"Section {section}"})
        pages += [
            {"path": f"s{section}/p{n}", "title": f"Page {section}.{n}"} for n in range(PER_SECTION)
        ]
    assert len(pages) > WHOLE_UP_TO
    space_content_update(space=space, pages=pages)
    space.refresh_from_db()
    return space


def _links(html: str, prefix: str) -> set[str]:
    return {part.split('"', 1)[0] for part in html.split(f'href="{prefix}')[1:]}


def test_a_page_shows_the_top_of_the_tree_and_its_own_branch(client, large):
    html = client.get(f"/s/{large.pk}/s2/p7").content.decode()
    links = _links(html, f"/s/{large.pk}/")
    assert {f"s{n}" for n in range(SECTIONS)} <= links
    assert {f"s2/p{n}" for n in range(PER_SECTION)} <= links
    assert not any(link.startswith(("s1/", "s3/")) for link in links)
    assert f'href="/s/{large.pk}/s2/p7" aria-current="page"' in html
    assert f'href="/s/{large.pk}/s3" data-closed' in html
    assert f'href="/s/{large.pk}/s2" data-closed' not in html
    assert "Page 2.6" in html and "Page 2.8" in html  # previous and next


def test_a_section_page_opens_its_own_pages(client, large):
    links = _links(client.get(f"/s/{large.pk}/s4").content.decode(), f"/s/{large.pk}/")
    assert {f"s4/p{n}" for n in range(PER_SECTION)} <= links
    assert not any(link.startswith("s0/") for link in links)


def test_the_site_shows_the_same_branch(organization, large, settings):
    from urllib.parse import urlsplit

    site = SiteFactory(organization=organization)
    site.spaces.add(large)
    visitor = Client(HTTP_HOST=urlsplit(settings.SITES_URL).netloc)
    html = visitor.get(f"/{site.pk}/{large.pk}/s0/p59").content.decode()
    links = _links(html, f"/{site.pk}/{large.pk}/")
    assert {f"s0/p{n}" for n in range(PER_SECTION)} <= links
    assert not any(link.startswith("s1/") for link in links)
    assert "Section 1" in html  # the next page in reading order
