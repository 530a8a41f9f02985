"""One rule for "a view fires at most once per visitor and interval" at every door: the reader
and ``POST /api/v1/spaces/{id}/views/`` (``space_view``, per visitor and space, 5 minutes) and a
published site's page (``site_view``, per visitor and page, a minute). Each door fires once
within the interval, whatever the cache holds (another process has its own), and again once
the visitor's last view is older than the interval (its row's time moved back)."""

from datetime import timedelta

import pytest
from django.core.cache import cache
from django.test import Client
from django.utils import timezone

from docplatform.events.models import Event
from docplatform.models import SpaceVisit
from docplatform.sites.models import SiteVisit
from docplatform.visits import READER_VIEW_INTERVAL, SITE_VIEW_INTERVAL
from tests.api_helpers import API, api_client

from .conftest import BROWSER

pytestmark = pytest.mark.django_db


def reader_read(space):
    client = Client(**BROWSER)
    return lambda: client.get(f"/s/{space.pk}/intro")


def api_view(space, member):
    client = api_client(member)
    return lambda: client.post(f"{API}/spaces/{space.pk}/views/", **BROWSER)


def site_read(site, space, visitor):
    return lambda: visitor.get(f"/{site.pk}/{space.pk}/intro")


DOORS = {
    "reader": (reader_read, "space_view", SpaceVisit, READER_VIEW_INTERVAL),
    "api": (api_view, "space_view", SpaceVisit, READER_VIEW_INTERVAL),
    "site": (site_read, "site_view", SiteVisit, SITE_VIEW_INTERVAL),
}


@pytest.fixture(params=list(DOORS))
def door(request, site, handbook, visitor, org_member):
    make, event_type, rows, interval = DOORS[request.param]
    arguments = {
        "reader": (handbook,),
        "api": (handbook, org_member),
        "site": (site, handbook, visitor),
    }[request.param]
    return make(*arguments), event_type, rows, interval


def test_a_door_fires_once_within_the_interval_and_again_after_it(door):
    view, event_type, rows, interval = door
    fired = Event.objects.filter(type=event_type)
    for _ in range(3):
        assert view().status_code in (200, 204)
    assert fired.count() == 1
    cache.clear()  # another process: the row decides
    view()
    assert fired.count() == 1

    rows.objects.update(last_fired_at=timezone.now() - interval + timedelta(seconds=5))
    cache.clear()
    view()
    assert fired.count() == 1  # still within the interval

    rows.objects.update(last_fired_at=timezone.now() - interval - timedelta(seconds=1))
    cache.clear()
    view()
    view()
    assert fired.count() == 2


def test_the_reader_and_the_api_count_one_member_together(handbook, org_member):
    """A member reading in the browser and a client calling the API for them is one view."""
    browser = Client()
    browser.force_login(org_member)
    assert browser.get(f"/s/{handbook.pk}/intro").status_code == 200
    api = api_client(org_member)
    assert api.post(f"{API}/spaces/{handbook.pk}/views/").status_code == 204
    [event] = Event.objects.filter(type="space_view")
    assert event.payload["visitor"]["userId"] == str(org_member.pk)
