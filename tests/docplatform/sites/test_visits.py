"""``site_view`` from the visit itself: each page view of a site fires it with the visitor as the
request shows them and the page's own URL, at most once per visitor and page a minute."""

from datetime import timedelta

import pytest
from django.conf import settings as django_settings
from django.core.cache import cache
from django.test import Client
from django.utils import timezone

from docplatform.events.models import Event
from docplatform.sites.models import SiteVisit
from docplatform.sites.services import site_visits_purge
from docplatform.tasks import purge_site_visits
from tests.api_helpers import API, api_client

from .conftest import BROWSER

pytestmark = pytest.mark.django_db


def views() -> list[dict]:
    return [
        event.payload for event in Event.objects.filter(type="site_view").order_by("created_at")
    ]


def test_a_page_view_fires_site_view_with_the_visitor_and_the_pages_own_url(
    visitor, settings, site, handbook
):
    settings.TRUSTED_PROXY_COUNT = 1
    visitor.cookies["_ga"] = "GA1.2.3"
    visitor.cookies["sessionid"] = "a-platform-cookie"
    response = visitor.get(
        f"/{site.pk}/{handbook.pk}/guide/install?utm_source=mail",
        HTTP_REFERER="https://www.example.org/search?q=install",
        HTTP_X_FORWARDED_FOR="6.6.6.6, 192.0.2.44",
    )
    assert response.status_code == 200
    anonymous_id = response.cookies["dp_visitor"].value
    assert response.cookies["dp_visitor"]["httponly"]
    assert response.cookies["dp_visitor"]["samesite"] == "Lax"

    [event] = Event.objects.filter(type="site_view")
    assert event.site == site
    assert event.payload == {
        "siteId": site.pk,
        "url": f"{settings.SITES_URL}/{site.pk}/{handbook.pk}/guide/install",
        "referrer": "https://www.example.org/search?q=install",
        "visitor": {
            "anonymousId": anonymous_id,
            "userAgent": BROWSER["HTTP_USER_AGENT"],
            "ip": "192.0.2.44",
            "cookies": {"_ga": "GA1.2.3"},
        },
    }


def test_the_home_and_a_spaces_first_page_are_views_of_their_own_addresses(visitor, site, handbook):
    visitor.get(f"/{site.pk}/")
    visitor.get(f"/{site.pk}/{handbook.pk}/")
    visitor.get(f"/{site.pk}/{handbook.pk}/intro")  # the same page as the space's address
    visitor.get(f"/{site.pk}/search?q=install")
    visitor.get(f"/{site.pk}/{handbook.pk}/no-such-page")
    visitor.head(f"/{site.pk}/{handbook.pk}/guide")
    base = f"{django_settings.SITES_URL}/{site.pk}/"
    assert [view["url"] for view in views()] == [base, f"{base}{handbook.pk}/intro"]


def test_a_visitor_fires_at_most_one_view_per_page_a_minute(visitor, site, handbook):
    intro, guide = f"/{site.pk}/{handbook.pk}/intro", f"/{site.pk}/{handbook.pk}/guide"
    visitor.get(intro)
    visitor.get(intro)
    cache.clear()  # another web process: the database decides
    visitor.get(intro + "?again")
    assert len(views()) == 1
    visitor.get(guide)
    assert len(views()) == 2
    Client(HTTP_HOST=visitor.defaults["HTTP_HOST"]).get(intro)  # another browser
    assert len(views()) == 3

    SiteVisit.objects.update(last_fired_at=timezone.now() - timedelta(seconds=61))
    cache.clear()
    visitor.get(intro)
    assert len(views()) == 4


def test_a_client_that_keeps_no_cookie_counts_by_its_address_and_user_agent(
    sites_host, site, handbook
):
    for _ in range(3):
        Client(HTTP_HOST=sites_host, **BROWSER).get(f"/{site.pk}/{handbook.pk}/intro")
        cache.clear()
    assert len(views()) == 1
    other_agent = {**BROWSER, "HTTP_USER_AGENT": "curl/8"}
    Client(HTTP_HOST=sites_host, **other_agent).get(f"/{site.pk}/{handbook.pk}/intro")
    assert len(views()) == 2


def test_the_site_and_the_beacon_count_a_page_together(visitor, site, handbook):
    """A site served on SITES_URL that also calls the beacon for its pages is counted once."""
    response = visitor.get(f"/{site.pk}/{handbook.pk}/intro")
    beacon = api_client()
    beacon.cookies["dp_visitor"] = response.cookies["dp_visitor"].value
    sent = beacon.post(
        f"{API}/beacon/sites/{site.pk}/views/",
        {"url": f"{django_settings.SITES_URL}/{site.pk}/{handbook.pk}/intro"},
        **BROWSER,
    )
    assert sent.status_code == 204
    assert len(views()) == 1


def test_old_visits_are_purged_by_a_scheduled_task(visitor, settings, site, handbook):
    visitor.get(f"/{site.pk}/{handbook.pk}/intro")
    visitor.get(f"/{site.pk}/{handbook.pk}/guide")
    old = SiteVisit.objects.filter(page__endswith="/intro").update(
        last_fired_at=timezone.now() - timedelta(minutes=2)
    )
    assert purge_site_visits() == old
    assert {visit.page for visit in SiteVisit.objects.all()} == {f"{handbook.pk}/guide"}
    assert site_visits_purge() == 0
    schedule = settings.CELERY_BEAT_SCHEDULE["purge-site-visits"]
    assert schedule["task"] == purge_site_visits.name
