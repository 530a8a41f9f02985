"""Consent at install: the install buttons open a page saying what the integration may do (its
scopes in words, the hosts its code may call) and where it goes; only confirming installs."""

import pytest
import yaml
from django.urls import reverse

from integrations.models import Installation
from integrations.services import integration_publish_folder

pytestmark = pytest.mark.django_db

SCRIPT = "from docplatform_sdk import create_integration\n\nintegration = create_integration()\n"


def publish_caller(publisher, folder, network=None, script=True):
    """Publish the ``caller`` integration of acme with ``network`` (None: not declared)."""
    manifest = {
        "name": "caller",
        "title": "Caller",
        "description": "Calls out.",
        "organization": "acme",
        "visibility": "private",
        "scopes": ["space:content:read", "site:views:read"],
    }
    if script:
        manifest["script"] = "main.py"
        (folder / "main.py").write_text(SCRIPT)
    if network is not None:
        manifest["network"] = {"fetch": network}
    (folder / "service-manifest.yaml").write_text(yaml.safe_dump(manifest))
    return integration_publish_folder(path=folder, publisher=publisher).version.integration


def install_url(integration, **query):
    url = reverse("marketplace:install", args=["acme", integration.name])
    return url + "?" + "&".join(f"{key}={value}" for key, value in query.items())


@pytest.mark.parametrize(
    ("network", "shown"),
    [
        (None, "Its code may call only this platform&#x27;s API."),
        ([], "Its code may call only this platform&#x27;s API."),
        (["*"], "Its code may call any public address on the internet."),
        (
            ["api.example.com", "*.example.org"],
            "Its code may call this platform&#x27;s API and these hosts:</p>\n"
            '<ul class="hosts"><li><code>api.example.com</code></li>'
            "<li><code>*.example.org</code></li></ul>",
        ),
    ],
)
def test_the_consent_page_says_what_it_may_do_and_installs_nothing(
    admin_client, org_admin, tmp_path, network, shown
):
    integration = publish_caller(org_admin, tmp_path, network)
    response = admin_client.get(install_url(integration, level="organization"))
    assert response.status_code == 200
    page = response.content.decode()
    assert "Install Caller?" in page
    assert "Into: Organization · Acme" in page
    assert "Read the content of your spaces <code>space:content:read</code>" in page
    assert "See the page views of your sites <code>site:views:read</code>" in page
    assert shown in page
    assert 'name="confirm" value="yes"' in page
    assert not Installation.objects.exists()


def test_the_integration_pages_install_buttons_lead_to_the_consent_page(
    admin_client, org_admin, tmp_path
):
    integration = publish_caller(org_admin, tmp_path)
    page = admin_client.get(reverse("marketplace:integration", args=["acme", integration.name]))
    consent = reverse("marketplace:install", args=["acme", integration.name])
    assert f'<form method="get" action="{consent}"' in page.content.decode()


def test_a_post_without_confirmation_installs_nothing_and_says_so(
    admin_client, org_admin, tmp_path
):
    integration = publish_caller(org_admin, tmp_path, ["*"])
    for unconfirmed in ({}, {"confirm": ""}, {"confirm": "no"}):
        response = admin_client.post(
            install_url(integration), {"level": "organization", **unconfirmed}
        )
        assert response.status_code == 400
        page = response.content.decode()
        assert "Nothing was installed" in page
        assert "any public address on the internet" in page
    assert not Installation.objects.exists()

    response = admin_client.post(
        install_url(integration), {"level": "organization", "confirm": "yes"}
    )
    installation = Installation.objects.get(integration=integration)
    assert response["Location"] == reverse(
        "marketplace:installation", args=["acme", installation.pk]
    )


def test_consenting_to_a_space_installs_into_that_space(
    admin_client, org_admin, tmp_path, acme_space
):
    integration = publish_caller(org_admin, tmp_path)
    page = admin_client.get(install_url(integration, level="space", space=acme_space.pk))
    assert "Into: Space · Product guide" in page.content.decode()
    here, _, elsewhere = page.content.decode().partition("used only where it is installed on a")
    assert "<code>space:content:read</code>" in here and "site:views:read" not in here
    assert elsewhere.startswith(" site</h2>")
    assert "See the page views of your sites <code>site:views:read</code>" in elsewhere
    assert f'name="space" value="{acme_space.pk}"' in page.content.decode()
    admin_client.post(
        install_url(integration), {"level": "space", "space": acme_space.pk, "confirm": "yes"}
    )
    assert Installation.objects.get(level="space").space == acme_space


def test_an_integration_without_code_states_no_network_access(admin_client, org_admin, tmp_path):
    integration = publish_caller(org_admin, tmp_path, script=False)
    page = admin_client.get(install_url(integration, level="organization")).content.decode()
    assert "Read the content of your spaces" in page
    assert "Network access" not in page


@pytest.mark.parametrize(
    "query", [{}, {"level": "galaxy"}, {"level": "space"}, {"level": "space", "space": "nope"}]
)
def test_a_consent_page_for_nowhere_is_the_integration_page_with_the_problem(
    admin_client, org_admin, tmp_path, query
):
    integration = publish_caller(org_admin, tmp_path)
    response = admin_client.get(install_url(integration, **query))
    assert response.status_code == 400
    assert b"Install Caller?" not in response.content
    assert not Installation.objects.exists()
