"""The installation pages: configuration form, status, space selection, pause, uninstall."""

import pytest
from django.urls import reverse

from docplatform import revisions as platform_revisions
from docplatform.events.models import Event
from integrations.models import Installation
from integrations.services.installations import installation_create
from tests.factories import IntegrationFactory, MembershipFactory

pytestmark = pytest.mark.django_db


@pytest.fixture
def installation(org_admin, organization, notifier):
    return installation_create(user=org_admin, integration=notifier, organization=organization)


def page_url(installation, name="marketplace:installation"):
    return reverse(name, args=[installation.organization.subdomain, installation.pk])


def configuration_data(**values):
    return {f"configuration-{name}": value for name, value in values.items()}


def setup_events():
    return list(Event.objects.filter(type="installation_setup").order_by("created_at"))


def test_the_form_has_a_field_per_property_type(admin_client, installation):
    response = admin_client.get(page_url(installation))
    assert response.status_code == 200
    # Required properties first, then by title, on every database.
    assert list(response.context["form"].fields) == [
        "channel",
        "region",
        "mention_authors",
        "sample_rate",
    ]
    content = response.content.decode()
    assert '<select name="configuration-region"' in content
    assert '<option value="eu" selected>eu</option>' in content
    assert '<option value="us">us</option>' in content
    assert 'type="checkbox" name="configuration-mention_authors"' in content
    assert 'type="number" name="configuration-sample_rate" value="100"' in content
    assert 'type="text" name="configuration-channel"' in content
    # The OAuth property shows its state only, and no field.
    assert "Slack workspace" in content
    assert "Not connected" in content
    assert "configuration-slack" not in content
    assert "Channel is required" in content  # the status reason, in the form's words


def test_the_list_shows_every_level(admin_client, org_admin, organization, notifier, acme_site):
    installation_create(
        user=org_admin, integration=notifier, organization=organization, site=acme_site
    )
    response = admin_client.get(reverse("marketplace:installations", args=["acme"]))
    assert response.status_code == 200
    levels = sorted(row["installation"].level for row in response.context["rows"])
    assert levels == ["organization", "site"]
    assert b"Site \xc2\xb7 Acme docs" in response.content


def test_a_valid_save_makes_the_installation_active(admin_client, installation):
    before = len(setup_events())
    response = admin_client.post(
        page_url(installation),
        configuration_data(channel="#docs", region="eu", sample_rate="100", mention_authors="on"),
    )
    assert response.status_code == 302
    installation.refresh_from_db()
    assert installation.status == "active"
    assert installation.status_reasons == []
    assert installation.configuration == {
        "channel": "#docs",
        "region": "eu",
        "sample_rate": 100,
        "mention_authors": True,
    }
    events = setup_events()
    assert len(events) == before + 1
    # Only the properties that changed reach the setup flow.
    assert events[-1].payload["changed"] == ["channel", "mention_authors"]
    page = admin_client.get(page_url(installation))
    assert b"Saved. The installation is active." in page.content


@pytest.mark.slow
def test_numbers_and_unset_values_are_stored_as_json(admin_client, installation):
    admin_client.post(
        page_url(installation), configuration_data(channel="#docs", region="", sample_rate="12.5")
    )
    installation.refresh_from_db()
    assert installation.configuration["sample_rate"] == 12.5
    assert "region" not in installation.configuration


def test_saving_nothing_changed_writes_nothing(admin_client, installation):
    before = len(setup_events())
    response = admin_client.post(
        page_url(installation), configuration_data(region="eu", sample_rate="100")
    )
    assert response.status_code == 302
    assert len(setup_events()) == before


@pytest.mark.parametrize(
    ("data", "field", "message"),
    [
        ({"region": "mars", "channel": "#docs"}, "region", "must be one of 'eu', 'us'"),
        ({"sample_rate": "lots", "channel": "#docs"}, "sample_rate", "Enter a number."),
        ({"sample_rate": "1e999", "channel": "#docs"}, "sample_rate", "Enter a number."),
    ],
)
def test_an_invalid_value_is_refused_next_to_its_field_and_nothing_is_written(
    admin_client, installation, data, field, message
):
    before = len(setup_events())
    response = admin_client.post(page_url(installation), configuration_data(**data))
    assert response.status_code == 400
    assert message in response.context["form"].errors[field][0]
    assert message.replace("'", "&#x27;") in response.content.decode()
    installation.refresh_from_db()
    assert installation.configuration == {
        "region": "eu",
        "sample_rate": 100,
        "mention_authors": False,
    }
    assert installation.status == "pending"
    assert len(setup_events()) == before


def test_pause_and_resume(admin_client, installation):
    assert (
        admin_client.get(page_url(installation, "marketplace:installation-pause")).status_code
        == 405
    )
    response = admin_client.post(page_url(installation, "marketplace:installation-pause"))
    assert response.status_code == 302
    installation.refresh_from_db()
    assert installation.status == "paused"
    assert b"Resume" in admin_client.get(page_url(installation)).content

    admin_client.post(page_url(installation, "marketplace:installation-resume"))
    installation.refresh_from_db()
    assert installation.status == "pending"


def test_uninstall_asks_for_confirmation(
    admin_client, org_admin, organization, notifier, installation, acme_site
):
    installation_create(
        user=org_admin, integration=notifier, organization=organization, site=acme_site
    )
    url = page_url(installation, "marketplace:installation-uninstall")
    response = admin_client.get(url)
    assert response.status_code == 200
    assert b"Uninstall Notifier?" in response.content
    assert b"Acme docs" in response.content  # the site installation goes too
    assert Installation.objects.count() == 2

    response = admin_client.post(url)
    assert response["Location"] == reverse("marketplace:installations", args=["acme"])
    assert not Installation.objects.exists()
    assert admin_client.get(page_url(installation)).status_code == 404


def test_choosing_the_spaces_of_an_organization_installation(
    admin_client, installation, acme_space, globex_space
):
    url = page_url(installation, "marketplace:installation-spaces")
    response = admin_client.post(url, {"space_selection": "selected", "spaces": [acme_space.pk]})
    assert response.status_code == 302
    installation.refresh_from_db()
    assert installation.space_selection == "selected"
    assert list(installation.selected_spaces.all()) == [acme_space]

    for data in (
        {"space_selection": "selected", "spaces": [globex_space.pk]},
        {"space_selection": "some"},
        {"spaces": ["nonsense"]},
    ):
        response = admin_client.post(url, data)
        assert response.status_code == 400, data
    installation.refresh_from_db()
    assert installation.space_selection == "selected"
    assert list(installation.selected_spaces.all()) == [acme_space]


def test_a_space_installation_has_its_own_configuration_and_no_space_selection(
    admin_client, org_admin, organization, acme_private, acme_space
):
    installation = installation_create(
        user=org_admin, integration=acme_private, organization=organization, space=acme_space
    )
    response = admin_client.get(page_url(installation))
    content = response.content.decode()
    assert 'name="configuration-max_entries"' in content
    assert "configuration-channel" not in content
    assert response.context["spaces_form"] is None
    assert (
        admin_client.post(
            page_url(installation, "marketplace:installation-spaces"), {"space_selection": "all"}
        ).status_code
        == 400
    )


def test_an_integration_that_renders_its_own_configuration_screen(
    admin_client, org_admin, organization
):
    integration = IntegrationFactory(
        organization=organization, configurations={"account": {"componentId": "settings"}}
    )
    installation = installation_create(
        user=org_admin, integration=integration, organization=organization
    )
    response = admin_client.get(page_url(installation))
    # Rendered by the integration's code, which this one has none of.
    assert b"could not be shown: the integration has no code to run." in response.content
    assert b"configuration-form" not in response.content


def test_recent_deliveries_are_listed(admin_client, installation, acme_space):
    admin_client.post(page_url(installation), configuration_data(channel="#docs"))
    platform_revisions.space_content_update(
        space=acme_space, pages=[{"path": "index", "title": "Home"}]
    )
    response = admin_client.get(page_url(installation))
    types = [delivery.event.type for delivery in response.context["deliveries"]]
    assert "space_content_updated" in types
    assert "installation_setup" in types


def test_another_organizations_installation_is_a_404(
    client, globex, globex_member, installation, globex_space
):
    client.force_login(globex_member)
    for name in ("marketplace:installation", "marketplace:installation-uninstall"):
        assert client.get(page_url(installation, name)).status_code == 404
        url = reverse(name, args=["globex", installation.pk])
        assert client.get(url).status_code == 404
    for name in (
        "marketplace:installation",
        "marketplace:installation-pause",
        "marketplace:installation-uninstall",
        "marketplace:installation-spaces",
    ):
        url = reverse(name, args=["globex", installation.pk])
        assert client.post(url, configuration_data(channel="x")).status_code == 404
    installation.refresh_from_db()
    assert installation.status == "pending"


def test_a_member_of_both_organizations_cannot_reach_an_installation_through_the_other(
    admin_client, org_admin, globex, installation
):
    MembershipFactory(organization=globex, user=org_admin)
    assert (
        admin_client.get(
            reverse("marketplace:installation", args=["globex", installation.pk])
        ).status_code
        == 404
    )


@pytest.mark.parametrize("installation_id", ["nope", "0" * 32, "%00", "a" * 500])
def test_bad_installation_ids_are_404(admin_client, installation_id):
    response = admin_client.get(f"/marketplace/orgs/acme/installations/{installation_id}/")
    assert response.status_code == 404


def test_odd_configuration_posts_never_fail(admin_client, installation, acme_space):
    for data in (
        configuration_data(channel="a\x00b"),
        configuration_data(sample_rate="\x00"),
        configuration_data(region="\x00"),
    ):
        assert admin_client.post(page_url(installation), data).status_code == 400
    response = admin_client.post(
        page_url(installation, "marketplace:installation-spaces"),
        {"space_selection": "selected", "spaces": ["\x00"]},
    )
    assert response.status_code == 400
    installation.refresh_from_db()
    assert installation.configuration == {
        "region": "eu",
        "sample_rate": 100,
        "mention_authors": False,
    }


def test_an_invalid_configuration_is_saved_and_its_problem_shown_beside_its_field(
    client, org_admin, organization, acme_space
):
    """A webhook URL the platform may not call is kept (nothing typed is lost), the banner
    says the installation is not active yet, and the problem sits beside the URL field in the
    form's words, not as a dotted path."""
    from integrations.models import Integration
    from integrations.services.installations import installation_create

    hook = installation_create(
        user=org_admin,
        integration=Integration.objects.get(name="webhook"),
        organization=organization,
        space=acme_space,
        configuration={},
    )
    client.force_login(org_admin)
    address = f"/marketplace/orgs/acme/installations/{hook.pk}/"
    response = client.post(
        address,
        {
            "configuration-url": "ftp://files.example.com/in",
            "configuration-space_content_updated": "on",
        },
        follow=True,
    )
    page = response.content.decode()
    hook.refresh_from_db()
    assert hook.configuration["url"] == "ftp://files.example.com/in"
    assert hook.status == "pending"
    assert "Saved, not active yet: 1 thing to fix (below)." in page
    assert "Saved. The installation" not in page
    field = page[page.index('id="id_configuration-url"') :]
    field = field[: field.index("</div>", field.index("errorlist"))]
    assert "Webhook URL: only http and https URLs may be called" in field
    assert "configuration.url" not in page


def test_saving_a_pending_webhook_unchanged_checks_it_again(
    client, org_admin, organization, acme_space, settings
):
    """Refused as a loopback address naming the setting that would allow it; once the operator
    set it, saving the same URL activates the installation (nothing else changed)."""
    from integrations.models import Integration
    from integrations.services.installations import installation_create

    settings.WEBHOOK_ALLOWED_NETWORKS = []
    hook = installation_create(
        user=org_admin,
        integration=Integration.objects.get(name="webhook"),
        organization=organization,
        space=acme_space,
        configuration={"url": "http://127.0.0.1:8765/hook", "space_content_updated": True},
    )
    assert hook.status == "pending"
    (reason,) = hook.status_reasons
    assert reason["message"].endswith(
        "a loopback address (an operator may allow its network with WEBHOOK_ALLOWED_NETWORKS)"
    )
    client.force_login(org_admin)
    address = f"/marketplace/orgs/acme/installations/{hook.pk}/"
    form = {
        "configuration-url": "http://127.0.0.1:8765/hook",
        "configuration-space_content_updated": "on",
    }
    saved = client.post(address, form, follow=True).content.decode()
    assert "Saved, not active yet: 1 thing to fix (below)." in saved
    assert "WEBHOOK_ALLOWED_NETWORKS" in saved
    still = client.post(address, form, follow=True).content.decode()
    assert "Checked again, not active yet: 1 thing to fix (below)." in still

    settings.WEBHOOK_ALLOWED_NETWORKS = ["127.0.0.0/8"]
    page = client.post(address, form, follow=True).content.decode()
    hook.refresh_from_db()
    assert hook.status == "active" and hook.status_reasons == []
    assert "Checked again: active now." in page
    assert "Nothing changed." in client.post(address, form, follow=True).content.decode()


def test_installing_into_a_space_lists_one_row_not_its_organization_holder(
    admin_client, org_admin, organization, acme_space, acme_site
):
    """The organization installation made by installing into a space (nothing of its own
    to configure) is not a row of its own; one installed on purpose still is."""
    quiet = IntegrationFactory(name="quiet", title="Quiet", organization=organization)
    in_space = installation_create(
        user=org_admin, integration=quiet, organization=organization, space=acme_space
    )
    on_site = installation_create(
        user=org_admin, integration=quiet, organization=organization, site=acme_site
    )
    rows = admin_client.get(reverse("marketplace:installations", args=["acme"])).context["rows"]
    listed = [row["installation"] for row in rows if row["installation"].integration == quiet]
    assert {i.pk for i in listed} == {in_space.pk, on_site.pk}

    chosen = IntegrationFactory(name="chosen", title="Chosen", organization=organization)
    whole = installation_create(user=org_admin, integration=chosen, organization=organization)
    installation_create(
        user=org_admin, integration=chosen, organization=organization, space=acme_space
    )
    rows = admin_client.get(reverse("marketplace:installations", args=["acme"])).context["rows"]
    assert whole.pk in {row["installation"].pk for row in rows}
