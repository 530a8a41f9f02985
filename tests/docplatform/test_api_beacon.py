"""The public beacon: site views and page feedback, with the visitor taken from the request."""

import pytest
from django.core.cache import cache

from docplatform.events.models import Delivery, Event
from integrations.services.installations import installation_create
from tests.api_helpers import API, NOT_FOUND, api_client, error_attrs, publish_integration
from tests.factories import PageFactory, RevisionFactory, SiteFactory, SpaceFactory

pytestmark = pytest.mark.django_db

BROWSER = {"HTTP_USER_AGENT": "Mozilla/5.0 (Test)", "REMOTE_ADDR": "198.51.100.23"}


@pytest.fixture(autouse=True)
def fresh_throttles():
    """The anonymous throttle counts per address, and every test client has the same one."""
    cache.clear()
    yield
    cache.clear()


@pytest.fixture
def space(organization):
    return SpaceFactory(organization=organization)


@pytest.fixture
def page(space):
    return PageFactory(revision=RevisionFactory(space=space), path="intro")


@pytest.fixture
def site(organization, space):
    site = SiteFactory(organization=organization)
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
    assert event.payload["spaceId"] == page.revision.space_id
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


@pytest.mark.parametrize(
    ("path", "body", "attrs"),
    [
        ("views", {}, ["url"]),
        ("views", {"url": "ftp://docs.example.com/"}, ["url"]),
        ("views", {"url": "javascript:alert(1)"}, ["url"]),
        ("views", {"url": "https://docs.example.com/", "referrer": "nope"}, ["referrer"]),
        ("views", {"url": "https://docs.example.com/" + "a" * 2000}, ["url"]),
        ("feedback", {}, ["pageId", "rating", "url"]),
        ("feedback", {"pageId": "nope", "rating": "good", "url": "https://d.example/"}, ["pageId"]),
        (
            "feedback",
            {"pageId": "{page}", "rating": "great", "url": "https://d.example/"},
            ["rating"],
        ),
        (
            "feedback",
            {"pageId": "{other}", "rating": "ok", "url": "https://d.example/"},
            ["pageId"],
        ),
    ],
)
def test_bad_beacon_bodies_get_field_errors_and_record_nothing(
    beacon, site, page, path, body, attrs
):
    other = PageFactory()
    body = {
        key: value.format(page=page.id, other=other.id) if isinstance(value, str) else value
        for key, value in body.items()
    }
    response = beacon.post(f"{API}/beacon/sites/{site.id}/{path}/", body)
    assert response.status_code == 400
    assert error_attrs(response) == attrs
    assert not Event.objects.exists()
