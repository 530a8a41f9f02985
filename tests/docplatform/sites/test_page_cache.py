"""A published site's public pages served from the shared cache, with an ETag and headers a CDN
keeps them by; what is one visitor's is never shared (README, "CACHE_URL")."""

import pytest
from django.test import Client

from docplatform.revisions import space_content_update
from docplatform.sites import site_services

from .conftest import BROWSER, HANDBOOK

pytestmark = pytest.mark.django_db

PRO = 'visitor.claims.plan == "pro"'
PUBLIC = "public, max-age=0, s-maxage=60, stale-while-revalidate=600"


@pytest.fixture
def cdn_settings(settings):
    settings.SITE_CACHE_SECONDS = 60
    settings.SITE_CACHE_STALE_SECONDS = 600
    return settings


@pytest.fixture
def known(visitor, site, handbook):
    """The visitor, once they have their anonymous cookie (from a first view)."""
    visitor.get(f"/{site.pk}/{handbook.pk}/intro")
    assert "dp_visitor" in visitor.cookies
    return visitor


def test_a_public_page_may_be_kept_by_a_cdn_and_revalidated_by_its_etag(
    cdn_settings, known, site, handbook
):
    address = f"/{site.pk}/{handbook.pk}/guide"
    first = known.get(address)
    assert first.status_code == 200
    assert first["Cache-Control"] == PUBLIC
    tag = first["ETag"]
    again = known.get(address, HTTP_IF_NONE_MATCH=tag)
    assert again.status_code == 304
    assert again.content == b""
    assert (again["ETag"], again["Cache-Control"]) == (tag, PUBLIC)
    other_page = known.get(f"/{site.pk}/{handbook.pk}/intro", HTTP_IF_NONE_MATCH=tag)
    assert other_page.status_code == 200 and other_page["ETag"] != tag


def test_the_answer_giving_a_visitor_their_cookie_is_never_shared(
    cdn_settings, visitor, site, handbook
):
    first = visitor.get(f"/{site.pk}/{handbook.pk}/guide")
    assert "dp_visitor" in first.cookies
    assert first["Cache-Control"] == "private, no-cache"
    second = visitor.get(f"/{site.pk}/{handbook.pk}/guide")
    assert "dp_visitor" not in second.cookies
    assert second["Cache-Control"] == PUBLIC
    assert second["ETag"] == first["ETag"]


def test_every_visitor_gets_the_same_page_and_nothing_of_another(known, sites_host, site, handbook):
    address = f"/{site.pk}/{handbook.pk}/guide"
    mine = known.get(address).content
    stranger = Client(HTTP_HOST=sites_host, **{**BROWSER, "REMOTE_ADDR": "203.0.113.9"})
    stranger.get(address)
    theirs = stranger.get(address).content
    assert mine == theirs
    assert known.cookies["dp_visitor"].value.encode() not in theirs
    # A rating's answer thanks the one who rated, and only them.
    rated = known.get(address + "?feedback=good")
    assert b"Thank you: your rating was recorded" in rated.content
    assert "ETag" not in rated and rated["Cache-Control"] == "private, no-cache"
    assert b"Thank you" not in stranger.get(address).content


def test_a_new_revision_is_served_at_once_and_the_old_etag_no_longer_matches(known, site, handbook):
    address = f"/{site.pk}/{handbook.pk}/guide"
    before = known.get(address)
    assert b"Read <strong>this</strong> first." in before.content
    pages = [
        {**page, "body": "Read **that** first."} if page["path"] == "guide" else page
        for page in HANDBOOK
    ]
    space_content_update(space=handbook, pages=pages, message="Reworded")
    after = known.get(address, HTTP_IF_NONE_MATCH=before["ETag"])
    assert after.status_code == 200
    assert b"Read <strong>that</strong> first." in after.content
    assert after["ETag"] != before["ETag"]


def test_renaming_the_site_or_the_space_is_served_at_once(known, org_admin, site, handbook):
    address = f"/{site.pk}/{handbook.pk}/guide"
    before = known.get(address)
    site_services.site_update(site=site, actor=org_admin, title="Acme handbook site")
    renamed = known.get(address, HTTP_IF_NONE_MATCH=before["ETag"])
    assert renamed.status_code == 200
    assert b"Acme handbook site" in renamed.content
    handbook.title = "The handbook"
    handbook.save()
    assert b"The handbook" in known.get(address).content


def test_the_navigation_marks_the_page_shown_on_every_page_of_a_revision(known, site, handbook):
    prefix = f"/{site.pk}/{handbook.pk}/"
    for path in ("intro", "guide", "guide/install"):
        html = known.get(prefix + path).content.decode()
        assert html.count('aria-current="page"') == 1
        assert f'href="{prefix}{path}" aria-current="page"' in html
    first = known.get(prefix).content.decode()  # the space's address shows its first page
    assert f'href="{prefix}intro" aria-current="page"' in first


def test_an_adaptive_page_or_one_with_blocks_is_not_shared(cdn_settings, known, site, handbook):
    block = '```block\n{"integration":"x","block":"y","key":"k1","props":{}}\n```\n'
    pages = [
        *HANDBOOK,
        {"path": "pro", "title": "Pro", "body": "For pro.", "condition": PRO},
        {"path": "widget", "title": "Widget", "body": "A block:\n\n" + block},
    ]
    space_content_update(space=handbook, pages=pages, message="More")
    widget = known.get(f"/{site.pk}/{handbook.pk}/widget")
    assert widget.status_code == 200
    assert widget["Cache-Control"] == "no-cache" and "ETag" not in widget
    # A public site's visitors have no claims: the pro page is hidden from every one of them,
    # so the pages around it are the same for all and still shared.
    assert known.get(f"/{site.pk}/{handbook.pk}/pro").status_code == 404
    guide = known.get(f"/{site.pk}/{handbook.pk}/guide")
    assert guide["Cache-Control"] == PUBLIC
    assert b"/pro" not in guide.content
