"""Installing, the setup flow into `active`, pausing and resuming (through the services)."""

import pytest
from django.core.exceptions import ValidationError
from django.db import connection
from django.http import Http404

from docplatform.events.models import Delivery, Event
from integrations.models import Installation
from integrations.services.installations import (
    install_link_rotate,
    installation_configure,
    installation_create,
    installation_pause,
    installation_resume,
    installation_uninstall,
)
from tests.factories import MembershipFactory, OrganizationFactory, SiteFactory, SpaceFactory
from tests.integrations.connecting import connect

pytestmark = pytest.mark.django_db

ANALYTICS_CONFIG = {
    "site": {
        "properties": {
            "tracking_id": {"type": "string", "title": "Tracking ID", "description": "d"},
            "region": {
                "type": "string",
                "title": "Region",
                "description": "d",
                "enum": ["eu", "us"],
                "default": "eu",
            },
            "sample_rate": {"type": "number", "title": "Rate", "description": "d"},
            "anonymize": {"type": "boolean", "title": "Anon", "description": "d", "default": True},
        },
        "required": ["tracking_id"],
    },
    "account": {
        "properties": {
            "slack": {
                "type": "button",
                "title": "Slack",
                "description": "d",
                "button_text": "Connect",
                "callback_url": "/oauth",
            }
        },
    },
}


@pytest.fixture
def analytics(publish, org_admin):
    return publish(org_admin, name="analytics", configurations=ANALYTICS_CONFIG)


@pytest.fixture
def site(organization):
    return SiteFactory(organization=organization)


def setup_events(installation):
    return list(
        Delivery.objects.filter(installation=installation)
        .order_by("id")
        .values_list("event__type", "event__payload")
    )


def test_installing_into_a_site_starts_pending_with_reasons(
    analytics, org_admin, organization, site
):
    installation = installation_create(
        user=org_admin, integration=analytics, organization=organization, site=site
    )
    assert installation.level == "site"
    assert installation.status == "pending"
    assert installation.status_reasons == [
        {"path": "configuration.tracking_id", "message": "is required"}
    ]
    assert installation.configuration == {"region": "eu", "anonymize": True}
    # The organization installation was made alongside; it has nothing required: active.
    assert installation.parent.level == "organization"
    assert installation.parent.status == "active"
    assert setup_events(installation) == [
        ("site_installation_setup", {"siteId": site.id, "status": "pending"})
    ]
    assert setup_events(installation.parent) == [
        ("installation_setup", {"status": "active", "changed": []})
    ]


def test_a_valid_edit_makes_it_active_and_every_edit_fires_installation_setup(
    analytics, org_admin, organization, site
):
    installation = installation_create(
        user=org_admin, integration=analytics, organization=organization, site=site
    )
    installation = installation_configure(
        user=org_admin, installation=installation, changes={"sample_rate": 50}
    )
    assert installation.status == "pending"
    installation = installation_configure(
        user=org_admin, installation=installation, changes={"tracking_id": "UA-1", "region": "us"}
    )
    assert installation.status == "active"
    assert installation.status_reasons == []
    assert installation.configuration["region"] == "us"
    assert setup_events(installation)[1:] == [
        (
            "installation_setup",
            {"status": "pending", "changed": ["sample_rate"], "siteId": site.id},
        ),
        (
            "installation_setup",
            {"status": "active", "changed": ["region", "tracking_id"], "siteId": site.id},
        ),
    ]
    # Unsetting a required value goes back to pending.
    installation = installation_configure(
        user=org_admin, installation=installation, changes={"tracking_id": None}
    )
    assert installation.status == "pending"


@pytest.mark.parametrize(
    ("changes", "field", "message"),
    [
        ({"region": "mars"}, "configuration.region", "must be one of 'eu', 'us'"),
        ({"sample_rate": "fast"}, "configuration.sample_rate", "must be a number, not str"),
        ({"sample_rate": True}, "configuration.sample_rate", "must be a number, not bool"),
        ({"anonymize": "yes"}, "configuration.anonymize", "must be a boolean, not str"),
        ({"tracking": "x"}, "configuration.tracking", "unknown property"),
    ],
)
def test_a_bad_value_is_refused_and_nothing_is_written(
    analytics, org_admin, organization, site, changes, field, message
):
    installation = installation_create(
        user=org_admin, integration=analytics, organization=organization, site=site
    )
    before = (installation.configuration, Event.objects.count())
    with pytest.raises(ValidationError) as error:
        installation_configure(
            user=org_admin, installation=installation, changes={"tracking_id": "UA-1", **changes}
        )
    assert list(error.value.message_dict) == [field]
    assert error.value.message_dict[field][0].startswith(message)
    installation.refresh_from_db()
    assert (installation.configuration, Event.objects.count()) == before
    assert installation.status == "pending"


def test_button_credentials_are_encrypted_and_kept_out_of_the_configuration(
    analytics, org_admin, organization
):
    installation = installation_create(
        user=org_admin, integration=analytics, organization=organization
    )
    for value in ({"access_token": "xoxb-typed-in"}, {"token": "x"}, None):
        with pytest.raises(ValidationError) as error:  # only the OAuth connect flow writes it
            installation_configure(
                user=org_admin, installation=installation, changes={"slack": value}
            )
        assert "Connect" in error.value.message_dict["configuration.slack"][0]
    with pytest.raises(ValidationError) as error:
        connect(installation, member=org_admin, property_name="slack", credentials={"token": "x"})
    assert "configuration.slack.access_token" in error.value.message_dict
    installation = connect(
        installation,
        member=org_admin,
        property_name="slack",
        credentials={"access_token": "xoxb-very-secret"},
    )
    assert installation.configuration == {}
    assert installation.credentials == {"slack": {"access_token": "xoxb-very-secret"}}
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT credentials, configuration FROM integrations_installation WHERE id = %s",
            [installation.pk],
        )
        stored = " ".join(str(column) for column in cursor.fetchone())
    assert "xoxb-very-secret" not in stored


def test_pausing_keeps_paused_through_edits_and_resuming_revalidates(
    analytics, org_admin, organization, site
):
    installation = installation_create(
        user=org_admin, integration=analytics, organization=organization, site=site
    )
    installation_pause(user=org_admin, installation=installation)
    installation = installation_configure(
        user=org_admin, installation=installation, changes={"tracking_id": "T"}
    )
    assert installation.status == "paused"
    assert installation.status_reasons == []
    # A paused installation receives no setup event either.
    assert [kind for kind, _ in setup_events(installation)] == ["site_installation_setup"]
    installation = installation_resume(user=org_admin, installation=installation)
    assert installation.status == "active"
    installation_configure(user=org_admin, installation=installation, changes={"tracking_id": None})
    installation_pause(user=org_admin, installation=installation)
    assert installation_resume(user=org_admin, installation=installation).status == "pending"


def test_private_integrations_install_only_in_their_own_organization(
    publish, org_admin, organization
):
    private = publish(org_admin, name="internal-tool", visibility="private")
    installation_create(user=org_admin, integration=private, organization=organization)
    stranger = MembershipFactory(organization=OrganizationFactory(subdomain="globex"), role="admin")
    with pytest.raises(Http404):
        installation_create(
            user=stranger.user, integration=private, organization=stranger.organization
        )


def test_unlisted_integrations_install_elsewhere_only_through_the_link(publish, org_admin):
    unlisted = publish(org_admin, name="partner", visibility="unlisted")
    stranger = MembershipFactory(organization=OrganizationFactory(subdomain="globex"), role="admin")
    kwargs = {"user": stranger.user, "integration": unlisted, "organization": stranger.organization}
    with pytest.raises(Http404):
        installation_create(**kwargs)
    with pytest.raises(Http404):
        installation_create(**kwargs, install_token="guess")
    old_token = unlisted.install_link_token
    new_token = install_link_rotate(integration=unlisted)
    with pytest.raises(Http404):
        installation_create(**kwargs, install_token=old_token)
    assert installation_create(**kwargs, install_token=new_token).status == "active"


def test_public_integrations_install_anywhere_but_only_for_your_own_organization(
    publish, org_admin, organization
):
    public = publish(org_admin, name="public-one", visibility="public", approved=True)
    stranger = MembershipFactory(organization=OrganizationFactory(subdomain="globex"), role="admin")
    installation_create(user=stranger.user, integration=public, organization=stranger.organization)
    with pytest.raises(Http404):  # acting for an organization you are not a member of
        installation_create(user=stranger.user, integration=public, organization=organization)


def test_one_installation_per_organization_space_and_site(analytics, org_admin, organization, site):
    space = SpaceFactory(organization=organization)
    installation_create(user=org_admin, integration=analytics, organization=organization)
    with pytest.raises(ValidationError, match="already installed in this organization"):
        installation_create(user=org_admin, integration=analytics, organization=organization)
    installation_create(user=org_admin, integration=analytics, organization=organization, site=site)
    with pytest.raises(ValidationError, match="already installed in this site"):
        installation_create(
            user=org_admin, integration=analytics, organization=organization, site=site
        )
    installation_create(
        user=org_admin, integration=analytics, organization=organization, space=space
    )
    assert Installation.objects.filter(integration=analytics).count() == 3


def test_the_target_limits_where_an_integration_installs(publish, org_admin, organization, site):
    space_only = publish(org_admin, name="space-only", target="space")
    with pytest.raises(ValidationError, match="installs into: space"):
        installation_create(
            user=org_admin, integration=space_only, organization=organization, site=site
        )


def test_another_organizations_space_is_not_found(analytics, org_admin, organization):
    foreign_space = SpaceFactory(organization=OrganizationFactory(subdomain="globex"))
    with pytest.raises(Http404):
        installation_create(
            user=org_admin, integration=analytics, organization=organization, space=foreign_space
        )


def test_uninstalling_the_organization_installation_removes_those_under_it(
    analytics, org_admin, organization, site
):
    child = installation_create(
        user=org_admin, integration=analytics, organization=organization, site=site
    )
    installation_uninstall(user=org_admin, installation=child.parent)
    assert not Installation.objects.exists()
