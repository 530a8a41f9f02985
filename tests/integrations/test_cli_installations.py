"""`manage.py integration install|configure|pause|resume|uninstall` and `fire_event`."""

import io

import pytest
from django.core.management import CommandError, call_command

from docplatform.events.models import Delivery, Event
from integrations.models import Installation
from tests.factories import (
    MembershipFactory,
    OrganizationFactory,
    RevisionFactory,
    SiteFactory,
    SpaceFactory,
)

pytestmark = pytest.mark.django_db

SITE_CONFIG = {
    "site": {
        "properties": {
            "tracking_id": {"type": "string", "title": "T", "description": "d"},
            "rate": {"type": "number", "title": "R", "description": "d"},
            "anonymize": {"type": "boolean", "title": "A", "description": "d"},
        },
        "required": ["tracking_id"],
    }
}


def run(*args):
    out = io.StringIO()
    call_command(*args, stdout=out)
    return out.getvalue()


@pytest.fixture
def analytics(publish, org_admin):
    return publish(
        org_admin, name="analytics", configurations=SITE_CONFIG, scopes=["site:views:read"]
    )


def test_install_configure_pause_resume_uninstall(analytics, org_admin, organization):
    site = SiteFactory(organization=organization)
    out = run(
        "integration", "install", "analytics", "--org", "acme", "--site", site.id,
        "--set", "rate=12.5", "--as", org_admin.username,
    )  # fmt: skip
    installation = Installation.objects.get(level="site")
    assert out.splitlines() == [
        f"{installation.id} pending",
        "  configuration.tracking_id: is required",
    ]
    assert installation.configuration == {"rate": 12.5}

    out = run(
        "integration", "configure", installation.id, "--set", "tracking_id=UA-9",
        "--set", "anonymize=yes", "--as", org_admin.username,
    )  # fmt: skip
    assert out.strip() == f"{installation.id} active"
    installation.refresh_from_db()
    assert installation.configuration == {"rate": 12.5, "tracking_id": "UA-9", "anonymize": True}

    assert run("integration", "pause", installation.id, "--as", org_admin.username).strip() == (
        f"{installation.id} paused"
    )
    assert run("integration", "resume", installation.id, "--as", org_admin.username).strip() == (
        f"{installation.id} active"
    )
    run("integration", "uninstall", installation.id, "--as", org_admin.username)
    assert not Installation.objects.filter(pk=installation.pk).exists()


def test_bad_values_are_refused_with_the_field_named(analytics, org_admin, organization):
    site = SiteFactory(organization=organization)
    out = io.StringIO()
    with pytest.raises(CommandError, match="install was refused") as error:
        call_command(
            "integration", "install", "analytics", "--org", "acme", "--site", site.id,
            "--set", "rate=fast", "--set", "anonymize=perhaps", "--as", org_admin.username,
            stdout=out,
        )  # fmt: skip
    assert error.value.returncode == 1
    assert out.getvalue().splitlines() == [
        "configuration.rate: 'fast' is not a number",
        "configuration.anonymize: 'perhaps' is not a yes/no value (true, false, yes, no, on, off)",
    ]
    assert not Installation.objects.exists()


def test_another_organizations_installation_is_not_found(analytics, org_admin, organization):
    run("integration", "install", "analytics", "--org", "acme", "--as", org_admin.username)
    installation = Installation.objects.get()
    stranger = MembershipFactory(organization=OrganizationFactory(subdomain="globex")).user
    for action in ["pause", "resume", "uninstall"]:
        with pytest.raises(CommandError, match="no such installation"):
            run("integration", action, installation.id, "--as", stranger.username)
    with pytest.raises(CommandError, match="no such installation"):
        run("integration", "configure", installation.id, "--set", "a=b", "--as", stranger.username)
    with pytest.raises(CommandError):  # acting for an organization you are not in
        run("integration", "install", "analytics", "--org", "acme", "--as", stranger.username)
    assert Installation.objects.get().status == "active"


def test_a_private_integration_of_another_organization_is_not_found(publish, org_admin):
    publish(org_admin, name="secret-tool", visibility="private")
    stranger = MembershipFactory(organization=OrganizationFactory(subdomain="globex")).user
    with pytest.raises(CommandError, match="secret-tool: no such integration"):
        run("integration", "install", "secret-tool", "--org", "globex", "--as", stranger.username)


def test_fire_event_reaches_installations_and_names_bad_fields(analytics, org_admin, organization):
    site = SiteFactory(organization=organization)
    run(
        "integration", "install", "analytics", "--org", "acme", "--site", site.id,
        "--set", "tracking_id=UA-1", "--as", org_admin.username,
    )  # fmt: skip
    out = run(
        "fire_event", "site_view", "--site", site.id, "--set", "url=https://d.test/a",
        "--set", "visitor.ip=203.0.113.7",
    )  # fmt: skip
    event = Event.objects.get(type="site_view")
    assert out.strip() == f"fired site_view {event.id} to 1 installation(s)"
    assert event.payload["url"] == "https://d.test/a"
    assert event.payload["visitor"]["ip"] == "203.0.113.7"
    assert Delivery.objects.filter(event=event).count() == 1

    out = io.StringIO()
    with pytest.raises(CommandError, match="the event was not fired"):
        call_command(
            "fire_event", "site_view", "--site", site.id, "--set", "colour=red", stdout=out
        )
    assert out.getvalue().startswith("colour: not a field of this event; the fields are: siteId,")
    out = io.StringIO()
    with pytest.raises(CommandError, match="the event was not fired"):
        call_command("fire_event", "space_view", "--site", site.id, stdout=out)
    assert out.getvalue().strip() == "space: space_view is fired for a space: give --space"
    with pytest.raises(CommandError, match="no such space"):
        call_command("fire_event", "space_view", "--space", "nope")
    assert Event.objects.filter(type="site_view").count() == 1


def test_fire_event_for_a_space_uses_its_current_revision(organization):
    space = SpaceFactory(organization=organization)
    space.current_revision = RevisionFactory(space=space)
    space.save()
    run("fire_event", "space_content_updated", "--space", space.id)
    assert Event.objects.get().payload == {
        "spaceId": space.id,
        "revisionId": space.current_revision_id,
    }


def test_fire_event_checks_set_values_against_the_schema_always(analytics, organization, settings):
    settings.EVENT_PAYLOAD_CHECKS = False  # as in production: the operator's values are input
    site = SiteFactory(organization=organization)
    out = io.StringIO()
    with pytest.raises(CommandError, match="the event was not fired"):
        call_command(
            "fire_event", "site_view", "--site", site.id, "--set", "visitor.ip=12", stdout=out
        )
    assert out.getvalue() == "visitor.ip: 12 is not of type 'string'\n"
    assert not Event.objects.filter(type="site_view").exists()

    run("fire_event", "site_view", "--site", site.id)  # a site without pages: its home
    assert Event.objects.get(type="site_view").payload["url"] == f"{settings.SITES_URL}/{site.id}/"
