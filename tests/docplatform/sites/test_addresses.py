"""The one rule "is this URL one of the site's pages?" (``docplatform.sites.addresses``), which the
site's pages and the beacon both ask."""

import pytest

from docplatform.sites.addresses import page_key
from tests.factories import SiteFactory

pytestmark = pytest.mark.django_db


@pytest.fixture
def site(settings):
    settings.SITES_URL = "https://sites.example.net"
    return SiteFactory(custom_domains=["Docs.Example.com", "", 42, "help.example.org."])


@pytest.mark.parametrize(
    "url",
    [
        "https://sites.example.net/{site}/",
        "https://sites.example.net/{site}",
        "https://sites.example.net:443/{site}/space/guide/install?utm=1#top",
        "https://docs.example.com/",
        "http://docs.example.com/guide",
        "https://DOCS.example.com:8443/guide",
        "https://help.example.org./a",
    ],
)
def test_the_sites_addresses(site, url):
    assert page_key(site, url.format(site=site.pk)) is not None


@pytest.mark.parametrize(
    "url",
    [
        "https://evil.example/anything",
        "https://sites.example.net/{other}/",
        "https://sites.example.net/{site}x/",
        "https://sites.example.net/",
        "http://sites.example.net/{site}/",  # not SITES_URL's scheme
        "https://sites.example.net:8443/{site}/",
        "https://sites.example.net/{site}/../{other}/",
        "https://sites.example.net/{site}/%2E%2E/{other}/",
        "https://docs.example.com@evil.example/",
        "https://user@docs.example.com/",
        "https://docs.example.com.evil.example/",
        "https://evil.example/?https://docs.example.com/",
        "ftp://docs.example.com/",
        "javascript://docs.example.com/%0aalert(1)",
        "https://docs.example.com:99999/",
        "https://docs.example.com/\x00",
        "//docs.example.com/",
        "",
    ],
)
def test_not_the_sites_addresses(site, url):
    assert page_key(site, url.format(site=site.pk, other=SiteFactory().pk)) is None


def test_views_are_counted_per_page_whatever_the_query(site):
    base = f"https://sites.example.net/{site.pk}/space/guide"
    assert page_key(site, base) == "space/guide"
    assert page_key(site, base + "?a=1#b") == "space/guide"
    custom = page_key(site, "https://docs.example.com/guide?x")
    assert custom == page_key(site, "http://docs.example.com/guide")
    assert custom != page_key(site, "https://docs.example.com/other")
    assert len(page_key(site, base + "/x" * 500)) <= 400  # a long address: its digest
