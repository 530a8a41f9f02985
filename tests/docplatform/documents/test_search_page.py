"""The platform's search (the top bar's box, ``/s/search``): the pages of every space a person
may read, each linking to the reader, never a page of a space they may not read; rate-limited
per address like a site's search."""

import pytest
from django.db import connection
from django.test import Client

from docplatform.revisions import space_content_update
from tests.factories import MembershipFactory, OrganizationFactory, SpaceFactory

pytestmark = pytest.mark.django_db


def _space(organization, title, visibility, pages):
    space = SpaceFactory(organization=organization, title=title, visibility=visibility)
    space_content_update(space=space, pages=pages)
    space.refresh_from_db()
    return space


@pytest.fixture
def spaces(organization):
    """acme's private handbook and globex's public guide, both about lighthouses."""
    handbook = _space(
        organization,
        "Handbook",
        "private",
        [
            {"path": "intro", "title": "Introduction", "body": "Welcome aboard."},
            {"path": "beacons", "title": "Beacons", "body": "Each **lighthouse** has a keeper."},
        ],
    )
    globex = OrganizationFactory(subdomain="globex")
    guide = _space(
        globex,
        "Globex guide",
        "public",
        [{"path": "sea", "title": "Lighthouse tours", "body": "Tours every day."}],
    )
    return handbook, guide


def _signed_in(user) -> Client:
    client = Client(REMOTE_ADDR="203.0.113.9")
    client.force_login(user)
    return client


def test_the_top_bar_has_the_search_box(org_reader):
    html = _signed_in(org_reader).get("/s/").content.decode()
    assert '<form class="topbar-search" role="search" method="get" action="/s/search">' in html
    assert '<label class="visually-hidden" for="topbar-search-q">Search your spaces</label>' in html


def test_a_reader_finds_the_pages_of_their_organizations_spaces(org_reader, spaces):
    handbook, _ = spaces
    response = _signed_in(org_reader).get("/s/search", {"q": "lighthouse"})
    assert response.status_code == 200
    html = response.content.decode()
    assert "1 page found for “lighthouse”." in html
    assert f'href="/s/{handbook.pk}/beacons">Beacons</a>' in html
    assert '<span class="muted small search-hit-space">Handbook</span>' in html
    assert "Each <mark>lighthouse</mark> has a keeper." in html
    assert "Lighthouse tours" not in html  # another organization's, public as it is
    assert 'value="lighthouse"' in html  # the box keeps the words


def test_a_private_spaces_pages_are_never_found_by_anyone_else(spaces, outsider):
    handbook, _ = spaces
    stranger = MembershipFactory(
        organization=OrganizationFactory(subdomain="initech"), role="reader"
    ).user
    for person in (outsider, stranger):
        html = _signed_in(person).get("/s/search", {"q": "lighthouse keeper"}).content.decode()
        assert "No page holds “lighthouse keeper”." in html
        assert handbook.pk not in html and "Beacons" not in html


def test_a_person_signed_out_is_sent_to_sign_in(spaces):
    response = Client().get("/s/search", {"q": "lighthouse"})
    assert response.status_code == 302
    assert response["Location"].startswith("/marketplace/login")


def test_a_search_too_long_is_refused_naming_q(org_reader):
    response = _signed_in(org_reader).get("/s/search", {"q": "word " * 50})
    assert response.status_code == 400
    assert "The search (q) must be at most 200 characters." in response.content.decode()


def test_searches_are_rate_limited_per_address(org_reader, spaces, settings):
    settings.SITE_RATES = {**settings.SITE_RATES, "search": "2/minute"}
    client = _signed_in(org_reader)
    for _ in range(2):
        assert client.get("/s/search", {"q": "lighthouse"}).status_code == 200
    refused = client.get("/s/search", {"q": "lighthouse"})
    assert refused.status_code == 429
    assert int(refused["Retry-After"]) >= 1
    html = refused.content.decode()
    assert "Too many searches from your address: try again in" in html
    assert "Beacons" not in html


def test_an_admin_sets_the_spaces_search_language_on_its_settings_page(org_admin, spaces):
    handbook, _ = spaces
    client = _signed_in(org_admin)
    settings_page = client.get(f"/s/{handbook.pk}/settings").content.decode()
    if connection.vendor != "postgresql":  # SQLite stems English whatever a space says
        assert 'name="search_language"' not in settings_page
        return
    assert '<option value="english" selected>english</option>' in settings_page
    assert "Beacons" in client.get("/s/search", {"q": "keepers"}).content.decode()  # stemmed
    form = {"title": "Handbook", "visibility": "private", "search_language": "simple"}
    assert client.post(f"/s/{handbook.pk}/settings", form).status_code == 302
    assert "Beacons" not in client.get("/s/search", {"q": "keepers"}).content.decode()
    assert "Beacons" in client.get("/s/search", {"q": "keeper"}).content.decode()
    refused = client.post(f"/s/{handbook.pk}/settings", {**form, "search_language": "klingon"})
    assert refused.status_code == 400
    assert "&#x27;klingon&#x27; is not a text search configuration" in refused.content.decode()
    handbook.refresh_from_db()
    assert handbook.search_language == "simple"
