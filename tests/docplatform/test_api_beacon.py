"""The public beacon: site views and page feedback, with the visitor taken from the request, for
pages at the site's own addresses (on SITES_URL, or its custom domains) only."""

from datetime import timedelta

import pytest
from django.core.cache import cache
from django.utils import timezone

from docplatform.events.models import Delivery, Event
from docplatform.sites.models import PageFeedback, SiteVisit
from integrations.services.installations import installation_create
from tests.api_helpers import API, NOT_FOUND, api_client, error_attrs, publish_integration
from tests.factories import PageFactory, RevisionFactory, SiteFactory

pytestmark = pytest.mark.django_db

BROWSER = {"HTTP_USER_AGENT": "Mozilla/5.0 (Test)", "REMOTE_ADDR": "198.51.100.23"}
DOCS = "https://docs.example.com/intro"  # a page on the site's custom domain


@pytest.fixture(autouse=True)
def fresh_throttles():
    """The anonymous throttle counts per address, and every test client has the same one."""
    cache.clear()
    yield
    cache.clear()


@pytest.fixture
def space_spec():
    return {"visibility": "public", "revision": False}


@pytest.fixture
def page(space):
    return PageFactory(revision=RevisionFactory(space=space), path="intro")


@pytest.fixture
def site(organization, space):
    site = SiteFactory(organization=organization, custom_domains=["docs.example.com"])
    site.spaces.add(space)
    return site


@pytest.fixture
def site_installation(tmp_path, org_admin, organization, site):
    integration = publish_integration(
        tmp_path / "analytics",
        org_admin,
        name="analytics",
        scopes=["site:views:read", "page:feedback:read"],
    )
    installation = installation_create(
        user=org_admin, integration=integration, organization=organization, site=site
    )
    assert installation.status == "active"
    return installation


@pytest.fixture
def beacon():
    return api_client()


def test_a_site_view_records_the_visitor_and_reaches_the_sites_installation(
    beacon, site, site_installation
):
    beacon.cookies["_ga"] = "GA1.2.3"
    beacon.cookies["sessionid"] = "platform-session"
    beacon.cookies["csrftoken"] = "platform-csrf"
    response = beacon.post(
        f"{API}/beacon/sites/{site.id}/views/",
        {"url": "https://docs.example.com/intro", "referrer": "https://www.example.org/"},
        **BROWSER,
    )
    assert response.status_code == 204
    anonymous_id = response.cookies["dp_visitor"].value
    assert response.cookies["dp_visitor"]["httponly"]

    event = Event.objects.get(type="site_view")
    assert event.site == site
    assert event.payload == {
        "siteId": site.id,
        "visitor": {
            "anonymousId": anonymous_id,
            "userAgent": "Mozilla/5.0 (Test)",
            "ip": "198.51.100.23",
            "cookies": {"_ga": "GA1.2.3"},
        },
        "url": "https://docs.example.com/intro",
        "referrer": "https://www.example.org/",
    }
    delivery = Delivery.objects.get(event=event)
    assert delivery.installation == site_installation


def test_the_anonymous_id_cookie_is_kept_across_views(beacon, site):
    url = f"{API}/beacon/sites/{site.id}/views/"
    first = beacon.post(url, {"url": "https://docs.example.com/"})
    second = beacon.post(url, {"url": "https://docs.example.com/a"})
    assert "dp_visitor" not in second.cookies
    ids = {event.payload["visitor"]["anonymousId"] for event in Event.objects.all()}
    assert ids == {first.cookies["dp_visitor"].value}


def test_the_platform_cookies_named_in_settings_are_never_recorded(beacon, site, settings):
    settings.SESSION_COOKIE_NAME = "dp_session"
    settings.CSRF_COOKIE_NAME = "dp_csrf"
    for name in ("dp_session", "dp_csrf", "sessionid", "csrftoken", "theme"):
        beacon.cookies[name] = "value"
    beacon.post(f"{API}/beacon/sites/{site.id}/views/", {"url": "https://docs.example.com/"})
    assert Event.objects.get().payload["visitor"]["cookies"] == {"theme": "value"}


@pytest.mark.parametrize(
    ("proxies", "forwarded", "recorded"),
    [
        (0, "192.0.2.1", "198.51.100.23"),
        (1, "192.0.2.1", "192.0.2.1"),
        (1, "6.6.6.6, 192.0.2.1", "192.0.2.1"),
        (2, "6.6.6.6, 192.0.2.1, 10.0.0.2", "192.0.2.1"),
        (1, "not-an-address", "198.51.100.23"),
    ],
)
def test_x_forwarded_for_counts_only_behind_trusted_proxies(
    beacon, site, settings, proxies, forwarded, recorded
):
    settings.TRUSTED_PROXY_COUNT = proxies
    beacon.post(
        f"{API}/beacon/sites/{site.id}/views/",
        {"url": "https://docs.example.com/"},
        HTTP_X_FORWARDED_FOR=forwarded,
        **BROWSER,
    )
    assert Event.objects.get().payload["visitor"]["ip"] == recorded


def test_page_feedback_is_recorded_and_delivered(beacon, site, page, site_installation):
    response = beacon.post(
        f"{API}/beacon/sites/{site.id}/feedback/",
        {
            "pageId": page.id,
            "rating": "good",
            "comment": "Clear and short.",
            "url": "https://docs.example.com/intro",
        },
        **BROWSER,
    )
    assert response.status_code == 204
    event = Event.objects.get(type="page_feedback")
    assert event.payload["feedback"] == {"rating": "good", "comment": "Clear and short."}
    assert event.payload["spaceId"] == page.space_id
    assert event.payload["referrer"] == ""
    assert event.payload["visitor"]["ip"] == "198.51.100.23"
    assert Delivery.objects.get(event=event).installation == site_installation


def test_the_beacon_takes_json_sent_as_text_plain(beacon, site):
    response = beacon.generic(
        "POST",
        f"{API}/beacon/sites/{site.id}/views/",
        '{"url": "https://docs.example.com/"}',
        content_type="text/plain;charset=UTF-8",
    )
    assert response.status_code == 204


def test_the_beacon_needs_no_csrf_token_even_with_a_session(site, org_member):
    client = api_client(org_member)
    client.handler.enforce_csrf_checks = True
    response = client.post(
        f"{API}/beacon/sites/{site.id}/views/", {"url": "https://docs.example.com/"}
    )
    assert response.status_code == 204


def test_an_unknown_site_is_a_404(beacon):
    response = beacon.post(f"{API}/beacon/sites/nosuchsite/views/", {"url": "https://a.example/"})
    assert response.status_code == 404
    assert response.json() == NOT_FOUND


@pytest.mark.slow
@pytest.mark.parametrize(
    ("path", "body", "attrs"),
    [
        ("views", {}, ["url"]),
        ("views", {"url": "ftp://docs.example.com/"}, ["url"]),
        ("views", {"url": "javascript:alert(1)"}, ["url"]),
        ("views", {"url": "https://docs.example.com/", "referrer": "nope"}, ["referrer"]),
        ("views", {"url": "https://docs.example.com/" + "a" * 2000}, ["url"]),
        ("feedback", {}, ["pageId", "rating", "url"]),
        ("feedback", {"pageId": "nope", "rating": "good", "url": DOCS}, ["pageId"]),
        ("feedback", {"pageId": "{page}", "rating": "great", "url": DOCS}, ["rating"]),
        ("feedback", {"pageId": "{other}", "rating": "ok", "url": DOCS}, ["pageId"]),
        (
            "feedback",
            {"pageId": "{page}", "rating": "ok", "url": DOCS, "comment": "x" * 1001},
            ["comment"],
        ),
        ("feedback", {"pageId": "{page}", "rating": "ok", "url": "https://evil.example/"}, ["url"]),
        ("views", {"url": "https://evil.example/anything"}, ["url"]),
        ("views", {"url": "https://docs.example.com.evil.example/"}, ["url"]),
        ("views", {"url": "https://docs.example.com@evil.example/"}, ["url"]),
        ("views", {"url": "{sites}/{other_site}/"}, ["url"]),
        ("views", {"url": "{sites}/{site}/../{other_site}/"}, ["url"]),
        ("views", {"url": "{sites}/{site}/%2e%2e/{other_site}/"}, ["url"]),
    ],
)
def test_bad_beacon_bodies_get_field_errors_and_record_nothing(
    beacon, settings, site, page, path, body, attrs
):
    other = PageFactory()
    names = {
        "page": page.id,
        "other": other.id,
        "sites": settings.SITES_URL,
        "site": site.id,
        "other_site": SiteFactory().id,
    }
    body = {
        key: value.format(**names) if isinstance(value, str) else value
        for key, value in body.items()
    }
    response = beacon.post(f"{API}/beacon/sites/{site.id}/{path}/", body)
    assert response.status_code == 400
    assert error_attrs(response) == attrs
    assert not Event.objects.exists()
    assert not PageFeedback.objects.exists() and not SiteVisit.objects.exists()


def test_a_page_at_the_sites_own_address_or_its_custom_domain_is_recorded(beacon, settings, site):
    views = f"{API}/beacon/sites/{site.id}/views/"
    own = f"{settings.SITES_URL}/{site.id}/{site.spaces.get().id}/intro?from=mail#top"
    assert beacon.post(views, {"url": own}).status_code == 204
    assert beacon.post(views, {"url": "http://DOCS.example.com:8080/guide"}).status_code == 204
    assert [event.payload["url"] for event in Event.objects.order_by("created_at")] == [
        own,
        "http://DOCS.example.com:8080/guide",
    ]


def test_a_visitor_viewing_a_page_again_within_a_minute_fires_one_site_view(beacon, site):
    views = f"{API}/beacon/sites/{site.id}/views/"
    for _ in range(2):
        assert beacon.post(views, {"url": DOCS}, **BROWSER).status_code == 204
    cache.clear()  # another process: the database decides
    assert beacon.post(views, {"url": DOCS + "?again=1"}, **BROWSER).status_code == 204
    assert Event.objects.filter(type="site_view").count() == 1
    assert beacon.post(views, {"url": DOCS + "/other"}, **BROWSER).status_code == 204
    assert Event.objects.filter(type="site_view").count() == 2

    SiteVisit.objects.update(last_fired_at=timezone.now() - timedelta(seconds=61))
    cache.clear()
    assert beacon.post(views, {"url": DOCS}, **BROWSER).status_code == 204
    assert Event.objects.filter(type="site_view").count() == 3


def test_a_second_rating_replaces_the_first_and_fires_again(beacon, site, page):
    feedback = f"{API}/beacon/sites/{site.id}/feedback/"
    first = {"pageId": page.id, "rating": "bad", "comment": "Too short", "url": DOCS}
    assert beacon.post(feedback, first, **BROWSER).status_code == 204
    second = {"pageId": page.id, "rating": "good", "url": DOCS}
    assert beacon.post(feedback, second, **BROWSER).status_code == 204

    (row,) = PageFeedback.objects.all()
    assert (row.rating, row.comment, row.page_path, row.page) == ("good", "", "intro", page)
    fired = [e.payload["feedback"] for e in Event.objects.filter(type="page_feedback")]
    assert sorted(fired, key=lambda f: f["rating"]) == [
        {"rating": "bad", "comment": "Too short"},
        {"rating": "good", "comment": ""},
    ]


def test_feedback_on_a_private_spaces_page_is_refused(beacon, site, page, space):
    space.visibility = "private"
    space.save()
    response = beacon.post(
        f"{API}/beacon/sites/{site.id}/feedback/",
        {"pageId": page.id, "rating": "ok", "url": DOCS},
    )
    assert response.status_code == 400
    assert error_attrs(response) == ["pageId"]
    assert not Event.objects.exists()


def test_feedback_is_rate_limited_per_address(beacon, settings, site, page):
    settings.SITE_RATES = {**settings.SITE_RATES, "feedback": "2/minute"}
    feedback = f"{API}/beacon/sites/{site.id}/feedback/"
    body = {"pageId": page.id, "rating": "ok", "url": DOCS}
    assert [beacon.post(feedback, body, **BROWSER).status_code for _ in range(2)] == [204, 204]
    refused = beacon.post(feedback, body, **BROWSER)
    assert refused.status_code == 429
    assert int(refused["Retry-After"]) > 0
    assert Event.objects.filter(type="page_feedback").count() == 2
    other_address = {**BROWSER, "REMOTE_ADDR": "198.51.100.99"}
    assert beacon.post(feedback, body, **other_address).status_code == 204
