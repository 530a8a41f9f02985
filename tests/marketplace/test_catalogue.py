"""The catalogue, the integration page, install links and installing, as members use them."""

import pytest
from django.urls import reverse

from docplatform.models import Membership
from integrations.models import Installation, IntegrationAsset
from tests.factories import MembershipFactory, OrganizationFactory

pytestmark = pytest.mark.django_db


def catalogue_names(response):
    """The names listed, leaving out what the platform itself provides (the webhook one)."""
    return sorted(
        card["integration"].name
        for card in response.context["cards"]
        if not card["integration"].organization.internal
    )


def integration_url(organization, integration):
    return reverse("marketplace:integration", args=[organization.subdomain, integration.name])


def install_url(organization, integration):
    return reverse("marketplace:install", args=[organization.subdomain, integration.name])


def install(client, organization, integration, data, query=""):
    """Install as the consent page's Install button does (``confirm``)."""
    url = install_url(organization, integration) + query
    return client.post(url, {**data, "confirm": "yes"})


def test_pages_ask_anonymous_visitors_to_sign_in(client, organization):
    response = client.get(reverse("marketplace:catalogue", args=["acme"]))
    assert response.status_code == 302
    assert response["Location"].startswith(reverse("marketplace:login"))


def test_signing_in_leads_to_the_catalogue_of_the_users_organization(client, org_member):
    response = client.post(
        reverse("marketplace:login"), {"username": org_member.username, "password": "password"}
    )
    assert response.status_code == 302
    response = client.get(response["Location"])
    assert response["Location"] == reverse("marketplace:catalogue", args=["acme"])


def test_signing_out(member_client):
    response = member_client.post(reverse("marketplace:logout"))
    assert response.status_code == 302
    assert member_client.get(reverse("marketplace:home")).status_code == 302


def test_a_user_without_organization_is_told_so(client, outsider):
    client.force_login(outsider)
    response = client.get(reverse("marketplace:home"))
    assert response.status_code == 200
    assert b"not a member of any organization" in response.content


def test_members_see_public_integrations_and_their_organizations_own(
    member_client, notifier, acme_private, globex_private, globex_unlisted
):
    response = member_client.get(reverse("marketplace:catalogue", args=["acme"]))
    assert response.status_code == 200
    assert catalogue_names(response) == ["acme-internal", "notifier"]
    assert b"Acme internal" in response.content
    assert b"visibility-private" in response.content


@pytest.mark.slow
def test_another_organizations_member_does_not_see_its_private_integration(
    client, globex_member, notifier, acme_private, globex_private, globex_unlisted
):
    client.force_login(globex_member)
    response = client.get(reverse("marketplace:catalogue", args=["globex"]))
    assert catalogue_names(response) == ["globex-secret", "notifier", "partner-search"]


def test_a_non_member_gets_404_for_another_organizations_pages(member_client, globex, notifier):
    for url in [
        reverse("marketplace:catalogue", args=["globex"]),
        reverse("marketplace:installations", args=["globex"]),
        integration_url(globex, notifier),
        reverse("marketplace:catalogue", args=["no-such-org"]),
    ]:
        assert member_client.get(url).status_code == 404, url


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("category=collaboration", ["notifier"]),
        ("category=content", ["acme-internal"]),
        ("q=notif", ["notifier"]),
        ("q=nothing-like-this", []),
        ("category=not-a-category&q=acme", ["acme-internal"]),
    ],
)
def test_the_catalogue_filters_and_searches(member_client, notifier, acme_private, query, expected):
    response = member_client.get(reverse("marketplace:catalogue", args=["acme"]) + "?" + query)
    assert response.status_code == 200
    assert catalogue_names(response) == expected


def test_the_catalogue_marks_installed_integrations(
    admin_client, org_admin, organization, notifier
):
    install(admin_client, organization, notifier, {"level": "organization"})
    response = admin_client.get(reverse("marketplace:catalogue", args=["acme"]))
    assert b"Installed" in response.content
    assert b"status-pending" in response.content


def test_a_member_of_several_organizations_switches_between_them(member_client, org_member, globex):
    MembershipFactory(organization=globex, user=org_member, role=Membership.Role.ADMIN)
    response = member_client.get(reverse("marketplace:catalogue", args=["acme"]))
    assert response.context["other_organizations"] == [
        (globex, reverse("marketplace:catalogue", args=["globex"]))
    ]
    assert member_client.get(reverse("marketplace:catalogue", args=["globex"])).status_code == 200


def test_the_integration_page(admin_client, organization, notifier):
    response = admin_client.get(integration_url(organization, notifier))
    assert response.status_code == 200
    content = response.content.decode()
    assert '<h3 id="overview">Overview' in content
    assert "<strong>every</strong>" in content
    assert "&lt;b&gt;bold&lt;/b&gt; stays text" in content
    assert "Read the content of your spaces" in content
    assert 'href="https://example.com/docs"' in content
    preview = IntegrationAsset.objects.get(version=notifier.latest_version, kind="preview")
    assert reverse("marketplace:asset", args=[preview.pk]) in content
    assert "Install in Acme" in content


def test_a_private_integration_of_another_organization_is_a_404(
    member_client, organization, globex_private
):
    assert member_client.get(integration_url(organization, globex_private)).status_code == 404
    response = install(member_client, organization, globex_private, {"level": "organization"})
    assert response.status_code == 404
    assert not Installation.objects.exists()


def test_an_unlisted_integration_is_reachable_only_through_its_install_link(
    admin_client, organization, globex_unlisted
):
    link = reverse("marketplace:install-link", args=[globex_unlisted.name])
    assert admin_client.get(integration_url(organization, globex_unlisted)).status_code == 404
    assert admin_client.get(link).status_code == 404
    assert admin_client.get(link + "?token=wrong").status_code == 404

    with_token = f"{link}?token={globex_unlisted.install_link_token}"
    response = admin_client.get(with_token)
    assert response.status_code == 200
    assert b"through its install link" in response.content
    icon = IntegrationAsset.objects.get(version=globex_unlisted.latest_version)
    icon_url = reverse("marketplace:asset", args=[icon.pk])
    assert admin_client.get(icon_url).status_code == 404
    assert (
        admin_client.get(f"{icon_url}?token={globex_unlisted.install_link_token}").status_code
        == 200
    )

    token = f"?token={globex_unlisted.install_link_token}"
    assert f'action="{install_url(organization, globex_unlisted)}"' in response.content.decode()
    assert (
        install(admin_client, organization, globex_unlisted, {"level": "organization"}).status_code
        == 404
    )
    response = install(
        admin_client, organization, globex_unlisted, {"level": "organization"}, token
    )
    assert response.status_code == 302
    installation = Installation.objects.get(integration=globex_unlisted)
    assert installation.organization == organization
    # Once installed, its page and icon are the organization's to see.
    assert admin_client.get(response["Location"]).status_code == 200
    assert admin_client.get(icon_url).status_code == 200


def test_the_install_link_acts_for_the_chosen_organization(
    admin_client, org_admin, globex_unlisted
):
    other = OrganizationFactory(subdomain="initech")
    MembershipFactory(organization=other, user=org_admin, role=Membership.Role.ADMIN)
    link = reverse("marketplace:install-link", args=[globex_unlisted.name])
    token = globex_unlisted.install_link_token
    page = admin_client.get(f"{link}?token={token}&org=initech").content.decode()
    assert f'action="{install_url(other, globex_unlisted)}"' in page
    assert f'name="token" value="{token}"' in page
    response = install(
        admin_client, other, globex_unlisted, {"level": "organization"}, f"?token={token}"
    )
    assert response.status_code == 302
    assert Installation.objects.get(integration=globex_unlisted).organization == other


def test_installing_in_the_organization(admin_client, org_admin, organization, notifier):
    response = install(admin_client, organization, notifier, {"level": "organization"})
    installation = Installation.objects.get(integration=notifier)
    assert response["Location"] == reverse(
        "marketplace:installation", args=["acme", installation.pk]
    )
    assert installation.level == "organization"
    assert installation.organization == organization
    assert installation.created_by == org_admin
    assert installation.status == "pending"

    response = install(admin_client, organization, notifier, {"level": "organization"})
    assert response.status_code == 400
    assert b"already installed" in response.content
    assert Installation.objects.count() == 1


def test_installing_into_a_space(admin_client, organization, acme_private, acme_space):
    response = install(
        admin_client, organization, acme_private, {"level": "space", "space": acme_space.pk}
    )
    assert response.status_code == 302
    installation = Installation.objects.get(level="space")
    assert installation.space == acme_space
    assert installation.parent.level == "organization"
    # The space is now taken: the install form offers no space any more.
    response = admin_client.get(integration_url(organization, acme_private))
    assert b"Installed in every space already" in response.content


def test_installing_into_a_site(admin_client, organization, notifier, acme_site):
    response = install(
        admin_client, organization, notifier, {"level": "site", "site": acme_site.pk}
    )
    assert response.status_code == 302
    installation = Installation.objects.get(level="site")
    assert installation.site == acme_site
    assert installation.status == "pending"
    assert installation.status_reasons == [
        {"path": "configuration.tracking_id", "message": "is required"}
    ]


def test_the_target_decides_where_an_integration_installs(
    admin_client, organization, acme_private, acme_site
):
    page = admin_client.get(integration_url(organization, acme_private)).content.decode()
    assert 'name="space"' in page
    assert 'name="site"' not in page
    response = install(
        admin_client, organization, acme_private, {"level": "site", "site": acme_site.pk}
    )
    assert response.status_code == 400
    assert b"installs into: space" in response.content
    assert not Installation.objects.exists()


@pytest.mark.parametrize(
    "data",
    [
        {"level": "space", "space": "GLOBEX_SPACE"},
        {"level": "site", "site": "GLOBEX_SITE"},
        {"level": "space", "space": "no-such-space"},
        {"level": "space"},
        {"level": "site", "site": ("1", "2")},
        {"level": "galaxy"},
        {},
    ],
)
def test_tampered_install_requests_are_refused_without_writing(
    admin_client, organization, notifier, acme_space, globex_space, globex_site, data
):
    replacements = {"GLOBEX_SPACE": globex_space.pk, "GLOBEX_SITE": globex_site.pk}
    data = {key: replacements.get(value, value) for key, value in data.items()}
    assert admin_client.get(install_url(organization, notifier), data).status_code == 400
    response = install(admin_client, organization, notifier, data)
    assert response.status_code == 400
    assert not Installation.objects.exists()


def test_icons_are_served_only_for_integrations_the_user_may_see(
    member_client, notifier, globex_private
):
    visible = IntegrationAsset.objects.get(version=notifier.latest_version, kind="icon")
    response = member_client.get(reverse("marketplace:asset", args=[visible.pk]))
    assert response.status_code == 200
    assert response["Content-Type"] == "image/png"
    assert response["X-Content-Type-Options"] == "nosniff"
    assert response.content.startswith(b"\x89PNG")

    hidden = IntegrationAsset.objects.get(version=globex_private.latest_version)
    assert member_client.get(reverse("marketplace:asset", args=[hidden.pk])).status_code == 404
    assert member_client.get("/marketplace/assets/999999/").status_code == 404


@pytest.mark.parametrize(
    "url",
    [
        "/marketplace/orgs/acme/?q=%00&category=%00",
        "/marketplace/orgs/acme/?q=" + "x" * 5000,
        "/marketplace/orgs/acme/?category=analytics&category=<script>",
        "/marketplace/install/partner-search/?token=%00&org=%00",
        "/marketplace/install/partner-search/?token=" + "t" * 500,
        "/marketplace/install/partner-search/?org=acme&org=zz",
        "/marketplace/assets/99999999999999999999999/",
        "/marketplace/assets/1/?token=%00",
        "/marketplace/orgs/acme/integrations/%00/",
        "/marketplace/orgs/%00/",
    ],
)
def test_odd_queries_never_fail(member_client, notifier, globex_unlisted, url):
    assert member_client.get(url).status_code in (200, 404)


def test_odd_install_posts_never_fail(admin_client, organization, notifier):
    for data in ({"level": "space", "space": "\x00"}, {"level": "\x00"}):
        assert admin_client.get(install_url(organization, notifier), data).status_code == 400
        assert install(admin_client, organization, notifier, data).status_code == 400


@pytest.mark.parametrize(
    ("network", "shown", "hidden"),
    [
        (
            {"fetch": ["api.github.com", "*.example.com"]},
            [b"API and these hosts", b"<code>api.github.com</code>", b"*.example.com"],
            [b"any public address"],
        ),
        ({"fetch": ["*"]}, [b"may call any public address on the internet"], [b"these hosts"]),
        (None, [b"may call only this platform&#x27;s API"], [b"any public address"]),
        ({"fetch": []}, [b"may call only this platform&#x27;s API"], [b"any public address"]),
    ],
)
def test_the_integration_page_lists_the_hosts_its_code_may_call(
    member_client, org_admin, tmp_path, network, shown, hidden
):
    import yaml

    from integrations.services import integration_publish_folder

    manifest = {
        "name": "caller",
        "title": "Caller",
        "description": "Calls out.",
        "organization": "acme",
        "visibility": "private",
        "scopes": [],
        "script": "main.py",
    }
    if network is not None:
        manifest["network"] = network
    (tmp_path / "service-manifest.yaml").write_text(yaml.safe_dump(manifest))
    (tmp_path / "main.py").write_text(
        "from docplatform_sdk import create_integration\n\nintegration = create_integration()\n"
    )
    integration = integration_publish_folder(path=tmp_path, publisher=org_admin).version.integration
    page = member_client.get(integration_url(integration.organization, integration)).content
    assert b"Network access" in page
    for text in shown:
        assert text in page
    for text in hidden:
        assert text not in page
