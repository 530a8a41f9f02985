"""The events API pages by cursor: newest first, `next` and `previous` links, events fired in
one instant ordered by id across a page break, filters kept, no count, and a cursor it never
gave refused with a 400 naming `cursor`."""

from datetime import timedelta
from urllib.parse import parse_qs, urlsplit

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone
from docplatform_sdk.cli.api import Platform
from docplatform_sdk.cli.credentials import Credentials

from docplatform.events.models import Event
from docplatform.services import api_token_create
from tests.api_helpers import API, api_client, error_attrs
from tests.factories import OrganizationFactory

pytestmark = pytest.mark.django_db


@pytest.fixture
def member_api(org_member):
    return api_client(org_member)


@pytest.fixture
def events(organization):
    """Twelve events of acme, the oldest first: five fired in one instant, and one of
    another organization; the newest first is their ids in reverse."""
    now = timezone.now()
    instants = [now - timedelta(minutes=20 - n) for n in range(7)] + [now] * 5
    made = []
    for when in instants:
        event = Event.objects.create(
            type="space_view" if len(made) % 3 else "site_view",
            organization=organization,
            payload={},
        )
        Event.objects.filter(pk=event.pk).update(created_at=when)
        made.append(event.pk)
    Event.objects.create(type="space_view", organization=OrganizationFactory(), payload={})
    tied = sorted(made[7:], reverse=True)
    return tied + list(reversed(made[:7]))


def follow(client, link):
    parts = urlsplit(link)
    return client.get(parts.path, {k: v[0] for k, v in parse_qs(parts.query).items()})


def test_pages_newest_first_by_cursor_with_links_both_ways(member_api, events):
    first = member_api.get(f"{API}/orgs/acme/events/", {"limit": 4})
    assert first.status_code == 200
    body = first.json()
    assert set(body) == {"next", "previous", "results"}  # no count
    assert [row["id"] for row in body["results"]] == events[:4]
    assert body["previous"] is None
    assert body["next"].startswith("http://testserver/api/v1/orgs/acme/events/?")

    seen, page = [], body
    while True:
        seen += [row["id"] for row in page["results"]]
        if page["next"] is None:
            break
        page = follow(member_api, page["next"]).json()
        assert "limit=4" in (page["previous"] or "")
    assert seen == events  # every event once, the five of one instant in id order

    back = follow(member_api, page["previous"]).json()
    assert [row["id"] for row in back["results"]] == events[4:8]
    back = follow(member_api, back["previous"]).json()
    assert [row["id"] for row in back["results"]] == events[:4]
    assert back["previous"] is None


def test_the_type_filter_is_kept_across_pages(member_api, events):
    page = member_api.get(f"{API}/orgs/acme/events/", {"type": "site_view", "limit": 2}).json()
    seen = []
    while True:
        seen += [(row["id"], row["type"]) for row in page["results"]]
        if page["next"] is None:
            break
        assert "type=site_view" in page["next"]
        page = follow(member_api, page["next"]).json()
    expected = [pk for pk in events if Event.objects.get(pk=pk).type == "site_view"]
    assert seen == [(pk, "site_view") for pk in expected]


def test_a_page_counts_nothing(member_api, events):
    with CaptureQueriesContext(connection) as queries:
        member_api.get(f"{API}/orgs/acme/events/", {"limit": 3})
    assert not [q["sql"] for q in queries if "COUNT(" in q["sql"].upper()]


@pytest.mark.parametrize(
    "cursor",
    [
        "abc",  # not base64 of anything
        "bm90IGEgY3Vyc29y",  # "not a cursor"
        "eHwyMDI2LTAxLTAxVDAwOjAwOjAwKzAwOjAwfGFi",  # an unknown direction
        "bnxub3QgYSB0aW1lfGFi",  # no time
        "bnwyMDI2LTAxLTAxVDAwOjAwOjAwfGFi",  # a time without its zone
        "%%%",
    ],
)
def test_a_cursor_it_never_gave_is_a_400_naming_it(member_api, events, cursor):
    response = member_api.get(f"{API}/orgs/acme/events/", {"cursor": cursor})
    assert response.status_code == 400
    assert error_attrs(response) == ["cursor"]
    assert "give a previous answer's next or previous" in response.json()["errors"][0]["detail"]


def test_limit_out_of_range_is_a_400_naming_it(member_api, events):
    assert error_attrs(member_api.get(f"{API}/orgs/acme/events/", {"limit": 501})) == ["limit"]
    assert error_attrs(member_api.get(f"{API}/orgs/acme/events/", {"cursor": ""})) == ["cursor"]


@pytest.mark.django_db(transaction=True)
def test_the_command_lines_client_reads_every_page_by_cursor(live_server, org_member):
    """The SDK's Platform.rows follows each answer's next link: here more events than its
    500-row pages, through a real server."""
    organization = org_member.memberships.get().organization
    now = timezone.now()
    Event.objects.bulk_create(
        Event(type="space_view", organization=organization, payload={}, created_at=now)
        for _ in range(620)
    )
    _, token = api_token_create(user=org_member, name="cli")
    platform = Platform(Credentials(api=f"{live_server.url}/api/v1", token=token))
    listed = [row["id"] for row in platform.rows("orgs/acme/events/", action="list events")]
    assert listed == list(Event.objects.order_by("-created_at", "-id").values_list("pk", flat=True))
    assert len(listed) == 620
