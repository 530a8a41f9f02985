"""Installation policies, one home each (integrations/policies.py), and the defects the
scattered rules caused, tried as people notice them: what the marketplace, the API and the
admin show, what is sent, and what publishing a new version does to installations."""

import logging

import pytest
from django.contrib.auth import get_user_model
from django.urls import reverse

from docplatform.events.models import Delivery, Event
from integrations import policies
from integrations.models import Installation, Integration
from integrations.operators import OPERATOR
from integrations.services.installations import (
    installation_configure,
    installation_create,
    installation_pause,
)
from tests.api_helpers import API, api_client
from tests.factories import (
    IntegrationFactory,
    IntegrationVersionFactory,
    MembershipFactory,
    OrganizationFactory,
    SiteFactory,
    SpaceFactory,
)

pytestmark = pytest.mark.django_db

#: The account configuration needs a token; a space needs nothing.
NEEDS_AN_ACCOUNT_TOKEN = {
    "account": {
        "properties": {"token": {"type": "string", "title": "Token", "description": "d"}},
        "required": ["token"],
    },
    "space": {
        "properties": {"count": {"type": "number", "title": "Count", "description": "d"}},
    },
}

COUNTER = {
    "account": {
        "properties": {"count": {"type": "number", "title": "Count", "description": "d"}},
    },
}


def counter_with(**properties):
    """The COUNTER account configuration with ``properties`` instead of ``count``."""
    props = {
        name: {"type": kind, "title": name.title(), "description": "d"}
        for name, kind in properties.items()
    }
    return {"account": {"properties": props}}


@pytest.fixture
def operator(db):
    return get_user_model().objects.create_superuser("operator", "op@example.com", "pw")


def setup_deliveries(installation) -> list:
    return list(
        Delivery.objects.filter(installation=installation, event__type="installation_setup")
        .order_by("id")
        .values_list("event__payload", flat=True)
    )


# --- Paused and receiving ---------------------------------------------------------------------


def test_editing_a_site_installation_under_a_paused_organization_installation_sends_nothing(
    publish, org_admin, org_member, organization
):
    integration = publish(org_admin, name="analytics", configurations={"site": COUNTER["account"]})
    site = SiteFactory(organization=organization)
    installation = installation_create(
        user=org_admin, integration=integration, organization=organization, site=site
    )
    installation_pause(user=org_admin, installation=installation.parent)
    before = Delivery.objects.filter(installation=installation).count()

    installation = installation_configure(
        user=org_admin, installation=installation, changes={"count": 3}
    )

    assert installation.configuration == {"count": 3}
    assert Delivery.objects.filter(installation=installation).count() == before
    assert not setup_deliveries(installation)
    # The installation token of a paused installation's child is refused, as before.
    assert policies.is_paused(installation) and not policies.is_receiving(installation)


def test_paused_and_receiving_are_one_rule_for_rows_and_models():
    assert policies.statuses_receiving("active", None)
    assert policies.statuses_receiving("active", "active")
    assert not policies.statuses_receiving("active", "pending")
    assert not policies.statuses_receiving("active", "paused")
    assert not policies.statuses_receiving("pending", "active")
    assert policies.statuses_paused("active", "paused")
    assert policies.statuses_paused("paused", None)
    assert not policies.statuses_paused("pending", "active")


# --- Effective status -------------------------------------------------------------------------


@pytest.fixture
def space_under_a_pending_organization(publish, org_admin, org_member, organization):
    integration = publish(org_admin, name="tokened", configurations=NEEDS_AN_ACCOUNT_TOKEN)
    space = SpaceFactory(organization=organization)
    installation = installation_create(
        user=org_admin, integration=integration, organization=organization, space=space
    )
    assert installation.status == "active"
    assert installation.parent.status == "pending"
    return installation


def test_a_space_installation_under_a_pending_organization_installation_shows_pending_in_the_api(
    space_under_a_pending_organization, org_member
):
    installation = space_under_a_pending_organization
    body = api_client(org_member).get(f"{API}/installations/{installation.pk}/").json()
    assert body["status"] == "pending"
    assert body["ownStatus"] == "active"
    assert body["statusReasons"] == [
        {
            "path": "parent",
            "message": "the organization installation is pending until its configuration is "
            "complete (configuration.token is required)",
        }
    ]


def test_a_space_installation_under_a_pending_organization_installation_is_not_shown_active_in_the_marketplace(  # noqa: E501
    space_under_a_pending_organization, org_member, client, organization
):
    installation = space_under_a_pending_organization
    client.force_login(org_member)
    page = client.get(
        reverse("marketplace:installation", args=[organization.subdomain, installation.pk])
    ).content.decode()
    assert "the integration receives its events" not in page
    assert 'class="badge status-pending"' in page
    assert "the organization installation is pending" in page
    listing = client.get(
        reverse("marketplace:installations", args=[organization.subdomain])
    ).content.decode()
    assert "status-active" not in listing


def test_a_space_installation_under_a_pending_organization_installation_shows_pending_in_the_admin(
    space_under_a_pending_organization, operator, client
):
    installation = space_under_a_pending_organization
    client.force_login(operator)
    page = client.get(
        f"/admin/integrations/installation/{installation.pk}/change/"
    ).content.decode()
    assert "Pending (its own status: active)" in page
    assert "the organization installation is pending" in page


def test_a_space_installation_under_a_paused_organization_installation_shows_paused(
    space_under_a_pending_organization,
):
    installation = space_under_a_pending_organization
    installation_pause(user=OPERATOR, installation=installation.parent)
    installation.refresh_from_db()
    shown = policies.effective_status(installation)
    assert (shown.status, shown.reasons[0]["path"]) == ("paused", "parent")


def test_the_webhook_integration_installed_at_organization_level_does_not_show_active(
    org_admin, org_member, organization, client
):
    webhook = Integration.objects.get(name="webhook")
    installation = installation_create(
        user=org_admin, integration=webhook, organization=organization
    )
    assert installation.status == "active"  # it holds the space and site installations

    body = api_client(org_member).get(f"{API}/installations/{installation.pk}/").json()
    assert body["status"] == "pending"
    assert body["statusReasons"][0]["path"] == "level"
    assert "install Webhooks in a space or a site" in body["statusReasons"][0]["message"]
    client.force_login(org_member)
    page = client.get(
        reverse("marketplace:installation", args=[organization.subdomain, installation.pk])
    ).content.decode()
    assert "the integration receives its events" not in page
    assert "install Webhooks in a space or a site" in page

    # Once a space installation hangs under it, it is what lets that one send.
    installation_create(
        user=org_admin,
        integration=webhook,
        organization=organization,
        space=SpaceFactory(organization=organization),
        configuration={"url": "https://hooks.example.com/in"},
    )
    body = api_client(org_member).get(f"{API}/installations/{installation.pk}/").json()
    assert (body["status"], body["statusReasons"]) == ("active", [])


# --- Republish re-validates -------------------------------------------------------------------


def test_publishing_a_version_that_adds_a_required_property_makes_installations_pending(
    publish, org_admin, org_member, organization
):
    publish(org_admin, name="counter", configurations=COUNTER)
    integration = Integration.objects.get(name="counter")
    installation = installation_create(
        user=org_admin, integration=integration, organization=organization
    )
    assert installation.status == "active"

    configurations = {
        "account": {
            "properties": {
                **COUNTER["account"]["properties"],
                "token": {"type": "string", "title": "Token", "description": "d"},
            },
            "required": ["token"],
        }
    }
    publish(org_admin, name="counter", configurations=configurations)

    installation.refresh_from_db()
    assert installation.status == "pending"
    assert installation.status_reasons == [
        {"path": "configuration.token", "message": "is required"}
    ]
    assert setup_deliveries(installation)[-1] == {"status": "pending", "changed": []}
    body = api_client(org_member).get(f"{API}/installations/{installation.pk}/").json()
    assert body["status"] == "pending"
    assert body["statusReasons"] == [{"path": "configuration.token", "message": "is required"}]


def test_publishing_a_version_that_drops_a_property_makes_installations_valid_again(
    publish, org_admin, org_member, organization, caplog
):
    publish(org_admin, name="counter", configurations=COUNTER)
    integration = Integration.objects.get(name="counter")
    installation = installation_create(
        user=org_admin,
        integration=integration,
        organization=organization,
        configuration={"count": 5},
    )
    assert installation.status == "active"

    with caplog.at_level(logging.WARNING, logger="integrations.services.installations"):
        publish(org_admin, name="counter", configurations=counter_with(label="string"))

    installation.refresh_from_db()
    assert installation.configuration == {}
    assert (installation.status, installation.status_reasons) == ("active", [])
    # No history model: the dropped value is kept in the log.
    assert any(
        installation.pk in record.getMessage() and '{"count": 5}' in record.getMessage()
        for record in caplog.records
    )
    # The installation's code learns of the change, status unchanged: changed lists it.
    assert setup_deliveries(installation)[-1] == {"status": "active", "changed": ["count"]}


def test_an_installation_left_pending_by_a_dropped_property_is_valid_after_the_next_publish(
    publish, org_admin, org_member, organization
):
    """The state the old code left behind ("'count' was unexpected"): a configuration
    holding a value of a property the definition no longer has."""
    publish(org_admin, name="counter", configurations=counter_with(label="string"))
    integration = Integration.objects.get(name="counter")
    installation = installation_create(
        user=org_admin, integration=integration, organization=organization
    )
    Installation.objects.filter(pk=installation.pk).update(
        configuration={"count": 5},
        status="pending",
        status_reasons=[{"path": "configuration", "message": "'count' was unexpected"}],
    )
    publish(
        org_admin,
        name="counter",
        configurations=counter_with(label="string"),
        description="Counts, again.",
    )
    installation.refresh_from_db()
    assert (installation.status, installation.configuration) == ("active", {})


def test_republishing_leaves_a_paused_installation_paused(
    publish, org_admin, org_member, organization
):
    publish(org_admin, name="counter", configurations=COUNTER)
    integration = Integration.objects.get(name="counter")
    installation = installation_create(
        user=org_admin, integration=integration, organization=organization
    )
    installation_pause(user=org_admin, installation=installation)
    configurations = {"account": {**counter_with(token="string")["account"], "required": ["token"]}}
    publish(org_admin, name="counter", configurations=configurations)
    installation.refresh_from_db()
    assert installation.status == "paused"
    assert installation.status_reasons == [
        {"path": "configuration.token", "message": "is required"}
    ]


def test_a_null_clears_a_property_the_definition_no_longer_has(
    publish, org_admin, org_member, organization
):
    publish(org_admin, name="counter", configurations=counter_with(label="string"))
    integration = Integration.objects.get(name="counter")
    installation = installation_create(
        user=org_admin, integration=integration, organization=organization
    )
    Installation.objects.filter(pk=installation.pk).update(configuration={"count": 5})

    response = api_client(org_admin).patch(
        f"{API}/installations/{installation.pk}/configuration/", {"count": None}
    )

    assert response.status_code == 200, response.json()
    assert response.json()["configuration"] == {}
    installation.refresh_from_db()
    assert installation.configuration == {}
    # An unknown property with a value is still refused, naming it.
    response = api_client(org_admin).patch(
        f"{API}/installations/{installation.pk}/configuration/", {"count": 1}
    )
    assert response.status_code == 400
    assert response.json()["errors"][0]["attr"] == "configuration.count"


# --- The admin goes through the services ------------------------------------------------------


def admin_form(organization) -> dict:
    """The Django admin's space form as it comes filled in (its rules at their defaults)."""
    return {"organization": organization.pk, "required_approvals": 0}


def test_changing_a_spaces_visibility_in_the_django_admin_fires_space_visibility_updated(
    operator, client, organization
):
    space = SpaceFactory(organization=organization, visibility="private")
    client.force_login(operator)
    response = client.post(
        f"/admin/docplatform/space/{space.pk}/change/",
        {**admin_form(organization), "title": "Renamed", "visibility": "public"},
    )
    assert response.status_code == 302, response.content.decode()[:2000]
    space.refresh_from_db()
    assert (space.title, space.visibility) == ("Renamed", "public")
    event = Event.objects.get(type="space_visibility_updated")
    assert event.payload == {
        "spaceId": space.pk,
        "previousVisibility": "private",
        "visibility": "public",
    }
    # Saving without changing the visibility fires nothing more.
    client.post(
        f"/admin/docplatform/space/{space.pk}/change/",
        {**admin_form(organization), "title": "Again", "visibility": "public"},
    )
    assert Event.objects.filter(type="space_visibility_updated").count() == 1


# --- May see, install, manage; the runnable version ---------------------------------------------


def test_who_may_install_is_one_rule(organization, org_admin, outsider):
    """Visibility (its own, public, unlisted through its link) and the roles' table together;
    the whole table, at every door, is ``test_role_doors``."""
    other = OrganizationFactory()
    own = IntegrationFactory(organization=organization, visibility="private")
    unlisted = IntegrationFactory(organization=other, visibility="unlisted")
    public = IntegrationFactory(organization=other, visibility="public")
    assert policies.may_install(org_admin, own, organization)
    assert policies.may_install(org_admin, public, organization)
    assert not policies.may_install(org_admin, unlisted, organization)
    assert policies.may_install(org_admin, unlisted, organization, unlisted.install_link_token)
    assert not policies.may_install(outsider, public, organization)
    # The query form agrees.
    visible = set(
        Integration.objects.filter(policies.visible_integrations_q([organization.pk])).values_list(
            "pk", flat=True
        )
    )
    assert {own.pk, public.pk} <= visible and unlisted.pk not in visible


def test_every_scope_but_a_read_scope_writes():
    assert not policies.scope_writes("space:content:read")
    assert not policies.scope_writes("page:feedback:read")
    writing = ["space:content:write", "space:git:sync", "site:visitor:auth", "conversations:ingest"]
    assert all(policies.scope_writes(scope) for scope in writing)
    reading = IntegrationFactory(scopes=["space:content:read", "site:views:read"])
    assert not policies.integration_writes(reading)
    assert policies.integration_writes(IntegrationFactory(scopes=["openapi:write"]))


def test_an_installation_token_reads_and_configures_its_own_installation_only(
    publish, org_admin, organization
):
    from docplatform.access import Action
    from integrations.authentication import InstallationPrincipal

    integration = publish(org_admin, name="counter", configurations=COUNTER)
    installation = installation_create(
        user=org_admin, integration=integration, organization=organization
    )
    other = installation_create(
        user=org_admin,
        integration=publish(org_admin, name="other", configurations=COUNTER),
        organization=organization,
    )
    token = InstallationPrincipal(installation)
    assert policies.may_act(token, Action.CONFIGURE, installation)
    assert policies.may_act(token, Action.READ, installation)
    assert not policies.may_act(token, Action.CONFIGURE, other)
    assert not any(
        policies.may_act(token, action, installation)
        for action in Action
        if action not in (Action.READ, Action.CONFIGURE)
    )
    assert policies.may_act(OPERATOR, Action.UNINSTALL, installation)
    assert not policies.may_act(MembershipFactory().user, Action.READ, installation)


def test_a_version_without_a_script_is_not_runnable():
    integration = IntegrationFactory()
    assert policies.runnable_version(integration) is None
    version = IntegrationVersionFactory(integration=integration, script_path="main.py")
    integration.released_version = version
    assert policies.runnable_version(integration) == version


def test_development_installations_and_those_under_them_run_the_development_version():
    integration = IntegrationFactory()
    released = integration.released_version
    development = IntegrationVersionFactory(integration=integration, channel="development")
    organization = integration.organization
    marked = Installation(integration=integration, organization=organization, development=True)
    plain = Installation(integration=integration, organization=organization)
    installations = {
        "marked": marked,
        "under a marked one": Installation(
            integration=integration, organization=organization, parent=marked
        ),
        "plain": plain,
        "marked under a plain one": Installation(
            integration=integration, organization=organization, parent=plain, development=True
        ),
    }

    def running() -> dict:
        return {
            name: policies.running_version(integration, installation).number
            for name, installation in installations.items()
        }

    # No development version yet: the released one everywhere.
    assert set(running().values()) == {released.number}
    integration.development_version = development
    assert running() == {
        "marked": development.number,
        "under a marked one": development.number,
        "plain": released.number,
        "marked under a plain one": development.number,
    }
    assert policies.running_version(integration) == released  # a call without an installation


def test_the_configuration_definition_of_a_space_falls_back_to_the_site_one():
    integration = IntegrationFactory(configurations={"site": {"properties": {}}})
    assert policies.definition_for_level(integration, "space") == {"properties": {}}
    assert policies.definition_for_level(integration, "organization") == {}
