"""Test events through the REST API (``installations/{id}/test-events/``, the command line's
``trigger``): a real event made from the sample payload, fired to that one installation;
who may send one, of which types, where, and every refusal naming its field with nothing
recorded."""

import pytest
from django.conf import settings

from docplatform import events
from docplatform.access import Action, refusal
from docplatform.events.models import Delivery, Event
from integrations.services.installations import installation_create, installation_pause
from tests.api_helpers import API, NOT_FOUND, api_client, error_attrs
from tests.factories import OrganizationFactory, RevisionFactory, SiteFactory, SpaceFactory

pytestmark = pytest.mark.django_db

#: The events a test event may be (setup events are fired by installing, not here).
PLATFORM_EVENTS = events.SPACE_EVENTS + events.SITE_EVENTS


@pytest.fixture
def hello(publish, org_admin):
    return publish(org_admin, name="hello", scopes=["space:content:read", "site:views:read"])


@pytest.fixture
def installation(hello, org_admin, organization):
    return installation_create(user=org_admin, integration=hello, organization=organization)


def send(user, installation, **body):
    return api_client(user).post(f"{API}/installations/{installation.pk}/test-events/", body)


def test_a_content_update_reaches_the_installation_alone_with_the_spaces_revision(
    publish, installation, org_admin, organization
):
    space = SpaceFactory(organization=organization)
    space.current_revision = RevisionFactory(space=space)
    space.save()
    other = publish(org_admin, name="other", scopes=["space:content:read"])
    installation_create(user=org_admin, integration=other, organization=organization)

    answer = send(org_admin, installation, type="space_content_updated")

    assert answer.status_code == 201, answer.json()
    delivery = Delivery.objects.get(event__type="space_content_updated")
    assert answer.json()["id"] == delivery.id
    assert answer.json()["eventId"] == str(delivery.event_uuid)
    assert (delivery.installation_id, answer.json()["status"]) == (installation.pk, "pending")
    assert delivery.event.payload == {"spaceId": space.pk, "revisionId": space.current_revision_id}
    assert delivery.event.space == space


def test_space_and_site_chosen_among_those_the_installation_reaches(
    installation, org_admin, organization
):
    first = SpaceFactory(organization=organization)
    second = SpaceFactory(organization=organization)
    theirs = SpaceFactory(organization=OrganizationFactory())
    site = SiteFactory(organization=organization)
    site.spaces.add(second)

    assert send(org_admin, installation, type="space_content_updated").status_code == 201
    assert (
        send(org_admin, installation, type="space_content_updated", space=second.pk).status_code
        == 201
    )
    refused = send(org_admin, installation, type="space_content_updated", space=theirs.pk)
    assert (refused.status_code, error_attrs(refused)) == (400, ["space"])
    assert "is not one this installation reaches" in refused.json()["errors"][0]["detail"]

    assert send(org_admin, installation, type="site_view").status_code == 201
    on_a_space = send(org_admin, installation, type="space_content_updated", site=site.pk)
    assert (on_a_space.status_code, error_attrs(on_a_space)) == (400, ["site"])

    sent = Event.objects.filter(type__in=PLATFORM_EVENTS).order_by("created_at", "pk")
    payloads = [event.payload for event in sent]
    assert [payload["spaceId"] for payload in payloads[:2]] == [first.pk, second.pk]
    assert payloads[2]["siteId"] == site.pk
    assert payloads[2]["url"] == f"{settings.SITES_URL}/{site.pk}/"  # the site has no pages


@pytest.mark.slow
def test_types_it_does_not_receive_are_refused_naming_type(installation, org_admin, organization):
    SpaceFactory(organization=organization)
    listed = api_client(org_admin).get(f"{API}/installations/{installation.pk}/test-events/")
    assert listed.json() == {"types": ["space_content_updated", "site_view"]}

    for event_type, says in (
        ("nope", "'nope' is not an event an organization installation receives; one of"),
        ("installation_setup", "not an event an organization installation receives"),
        ("site_veiw", "receives; did you mean 'site_view'?; one of space_view,"),
        ("space_view", "needs the scope space:metadata:read"),
    ):
        answer = send(org_admin, installation, type=event_type)
        assert (answer.status_code, error_attrs(answer)) == (400, ["type"]), answer.json()
        assert says in answer.json()["errors"][0]["detail"]
    bad = send(org_admin, installation, type="Space View!")
    assert (bad.status_code, error_attrs(bad)) == (400, ["type"])
    assert not Event.objects.filter(type__in=PLATFORM_EVENTS).exists()


@pytest.mark.slow
def test_admins_send_members_list_others_see_nothing(
    installation, org_admin, org_member, outsider, organization
):
    SpaceFactory(organization=organization)
    member = send(org_member, installation, type="space_content_updated")
    assert member.status_code == 403
    assert member.json()["errors"][0]["detail"] == refusal(Action.SEND_TEST_EVENTS)
    listed = api_client(org_member).get(f"{API}/installations/{installation.pk}/test-events/")
    assert listed.status_code == 200
    stranger = send(outsider, installation, type="space_content_updated")
    assert (stranger.status_code, stranger.json()) == (404, NOT_FOUND)
    assert not Event.objects.filter(type__in=PLATFORM_EVENTS).exists()


def test_a_paused_installation_or_one_without_spaces_is_refused(
    installation, org_admin, organization
):
    nowhere = send(org_admin, installation, type="space_content_updated")
    assert (nowhere.status_code, error_attrs(nowhere)) == (400, ["space"])
    assert "reaches no space yet" in nowhere.json()["errors"][0]["detail"]

    SpaceFactory(organization=organization)
    installation_pause(user=org_admin, installation=installation)
    paused = send(org_admin, installation, type="space_content_updated")
    assert (paused.status_code, error_attrs(paused)) == (400, ["status"])
    assert paused.json()["errors"][0]["detail"] == "the installation is paused"
    assert not Event.objects.filter(type__in=PLATFORM_EVENTS).exists()
