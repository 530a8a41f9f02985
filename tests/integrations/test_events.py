"""Where events go, what they carry, and that none is lost when the broker is down."""

import pytest
from django.db import transaction

from docplatform import events
from docplatform.events.leases import delivery_claim
from docplatform.events.models import Delivery, Event
from docplatform.events.outbox import deliveries_sweep
from docplatform.management.operator_events import event_fire_by_operator
from docplatform.revisions import space_content_update
from docplatform.services import (
    page_feedback_record,
    site_view_record,
    space_view_record,
    space_visibility_set,
)
from integrations.models import Installation
from integrations.services.installations import (
    installation_create,
    installation_pause,
    installation_select_spaces,
)
from tests.conftest import broker_unreachable, wait_until
from tests.factories import PageFactory, SiteFactory, SpaceFactory

VISITOR = events.Visitor(
    anonymous_id="anon-1", user_agent="Mozilla/5.0", ip="203.0.113.9", cookies={"theme": "dark"}
)


def recipients(event_type):
    event = Event.objects.filter(type=event_type).latest("created_at")
    return sorted(
        Delivery.objects.filter(event=event).values_list(
            "installation__integration__name", "installation__level"
        )
    )


@pytest.fixture
def install(org_admin, organization):
    def install_(integration, **kwargs):
        return installation_create(
            user=org_admin, integration=integration, organization=organization, **kwargs
        )

    return install_


@pytest.mark.django_db
def test_a_space_event_reaches_exactly_the_installations_that_should_get_it(
    publish, org_admin, organization, space, install
):
    other_space = SpaceFactory(organization=organization)
    scoped = {"scopes": ["space:content:read"]}
    install(publish(org_admin, name="in-space", **scoped), space=space)
    install(publish(org_admin, name="org-wide", **scoped))
    selected = install(publish(org_admin, name="org-selected", **scoped))
    installation_select_spaces(
        user=org_admin, installation=selected, space_selection="selected", spaces=[space]
    )
    not_selected = install(publish(org_admin, name="org-elsewhere", **scoped))
    installation_select_spaces(
        user=org_admin, installation=not_selected, space_selection="selected", spaces=[other_space]
    )
    install(publish(org_admin, name="other-space", **scoped), space=other_space)
    install(publish(org_admin, name="no-scope", scopes=["space:metadata:read"]), space=space)
    paused = install(publish(org_admin, name="paused", **scoped), space=space)
    installation_pause(user=org_admin, installation=paused)
    parent_paused = install(publish(org_admin, name="parent-paused", **scoped), space=space)
    installation_pause(user=org_admin, installation=parent_paused.parent)
    pending = publish(
        org_admin,
        name="pending",
        configurations={
            "space": {
                "properties": {"key": {"type": "string", "title": "K", "description": "d"}},
                "required": ["key"],
            }
        },
        **scoped,
    )
    assert install(pending, space=space).status == "pending"
    # Installed in the space and in the organization: one delivery, at the space installation.
    both = publish(org_admin, name="both", **scoped)
    install(both, space=space)
    installation_select_spaces(
        user=org_admin,
        installation=Installation.objects.get(integration=both, level="organization"),
        space_selection="all",
    )

    with transaction.atomic():
        space_content_update(space=space, pages=[{"path": "a", "title": "A", "body": "x"}])

    assert recipients("space_content_updated") == [
        ("both", "space"),
        ("in-space", "space"),
        ("org-selected", "organization"),
        ("org-wide", "organization"),
    ]


@pytest.mark.django_db
def test_site_events_reach_site_installations_and_organizations_covering_its_spaces(
    publish, org_admin, organization, space, install
):
    site = SiteFactory(organization=organization)
    site.spaces.add(space)
    other_site = SiteFactory(organization=organization)
    scoped = {"scopes": ["site:views:read"]}
    install(publish(org_admin, name="on-site", **scoped), site=site)
    install(publish(org_admin, name="on-other-site", **scoped), site=other_site)
    install(publish(org_admin, name="org-wide", **scoped))
    covering = install(publish(org_admin, name="org-covering", **scoped))
    installation_select_spaces(
        user=org_admin, installation=covering, space_selection="selected", spaces=[space]
    )
    install(publish(org_admin, name="no-scope", scopes=["page:feedback:read"]), site=site)

    site_view_record(site=site, visitor=VISITOR, url="https://docs.acme.test/a", referrer="")
    assert recipients("site_view") == [
        ("on-site", "site"),
        ("org-covering", "organization"),
        ("org-wide", "organization"),
    ]


@pytest.mark.django_db
def test_payloads_carry_the_specification_fields(publish, org_admin, organization, space, install):
    site = SiteFactory(organization=organization)
    site.spaces.add(space)
    everything = [
        "space:content:read",
        "space:metadata:read",
        "space:git:sync",
        "site:views:read",
        "page:feedback:read",
    ]
    installation = install(publish(org_admin, name="all-events", scopes=everything))
    page = PageFactory(revision=space.current_revision)

    revision = space_content_update(space=space, pages=[{"path": "p", "title": "P"}])
    space_visibility_set(space=space, visibility="unlisted")
    # Git sync's events come from real syncs (tests/docplatform/gitsync); here, as an
    # operator fires them, with the specification's fields alone.
    event_fire_by_operator(event_type="space_gitsync_started", space=space)
    event_fire_by_operator(event_type="space_gitsync_completed", space=space)
    space_view_record(space=space, visitor=VISITOR)
    site_view_record(site=site, visitor=VISITOR, url="https://d.test/p", referrer="https://r.test")
    page_feedback_record(
        site=site,
        page=page,
        rating="good",
        comment="Clear!",
        visitor=VISITOR,
        url="https://d.test/p",
        referrer="",
    )

    deliveries = Delivery.objects.filter(installation=installation).exclude(
        event__type="installation_setup"
    )
    payloads = {d.event.type: events.payload_for(d.event, d) for d in deliveries}
    for event_type, payload in payloads.items():
        delivery = deliveries.get(event__type=event_type)
        assert payload["type"] == event_type
        assert payload["eventId"] == str(delivery.event_uuid)
        assert payload["installationId"] == installation.id
        assert set(payload) == {
            "type",
            "eventId",
            "installationId",
            *events.EVENT_FIELDS[event_type],
        }
    visitor = {"anonymousId": "anon-1", "userAgent": "Mozilla/5.0", "ip": "203.0.113.9"}
    assert payloads["space_content_updated"]["revisionId"] == revision.id
    assert payloads["space_visibility_updated"]["previousVisibility"] == "private"
    assert payloads["space_visibility_updated"]["visibility"] == "unlisted"
    assert payloads["space_gitsync_completed"]["status"] == "success"
    assert payloads["site_view"]["visitor"] == {**visitor, "cookies": {"theme": "dark"}}
    assert payloads["page_feedback"]["feedback"] == {"rating": "good", "comment": "Clear!"}
    assert payloads["page_feedback"]["pageId"] == page.id
    assert payloads["page_feedback"]["spaceId"] == space.id
    # Each delivery has its own eventId.
    assert len({p["eventId"] for p in payloads.values()}) == len(payloads)


@pytest.mark.django_db
def test_bad_host_action_input_is_refused_and_fires_nothing(organization, space):
    from django.core.exceptions import ValidationError

    before = Event.objects.count()
    with pytest.raises(ValidationError) as error:
        space_content_update(space=space, pages=[{"path": "", "title": "T"}, "nope"])
    assert set(error.value.message_dict) == {"pages.0.path", "pages.1"}
    with pytest.raises(ValidationError):
        space_visibility_set(space=space, visibility="secret")
    assert Event.objects.count() == before
    assert space.revisions.count() == 1


@pytest.mark.django_db
def test_a_delivery_is_claimed_by_one_worker_at_a_time(publish, org_admin, space, install):
    install(publish(org_admin, name="one", scopes=["space:content:read"]), space=space)
    space_content_update(space=space, pages=[{"path": "a", "title": "A"}])
    delivery = Delivery.objects.get(event__type="space_content_updated")
    assert delivery_claim(delivery.pk) is not None
    assert delivery_claim(delivery.pk) is None


def test_nothing_is_lost_when_the_broker_is_down_at_commit(
    publish, org_admin, space, install, settings, celery_worker
):
    settings.DELIVERY_SWEEP_GRACE_SECONDS = 0
    for name in ("first", "second", "third"):
        install(publish(org_admin, name=name, scopes=["space:content:read"]), space=space)
    wait_until(lambda: not Delivery.objects.exclude(status="succeeded").exists())

    with broker_unreachable():
        space_content_update(space=space, pages=[{"path": "a", "title": "A"}])
    deliveries = Delivery.objects.filter(event__type="space_content_updated")
    assert deliveries.count() == 3
    assert set(deliveries.values_list("queued_at", "status")) == {(None, "pending")}

    assert deliveries_sweep() == 3
    wait_until(lambda: set(deliveries.values_list("status", flat=True)) == {"succeeded"})
    assert set(deliveries.values_list("attempts", flat=True)) == {0}
