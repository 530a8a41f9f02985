"""The operator's admin screens for integrations and versions."""

import io

import pytest
from django.core.management import call_command

from integrations.models import Integration, IntegrationVersion

pytestmark = pytest.mark.django_db


@pytest.fixture
def demo(db):
    call_command("seed_demo", stdout=io.StringIO())


@pytest.fixture
def operator_client(client, demo):
    from django.contrib.auth import get_user_model

    client.force_login(get_user_model().objects.get(username="admin"))
    return client


def names_in(response):
    return sorted(obj.name for obj in response.context["cl"].result_list)


@pytest.mark.slow
def test_the_admin_lists_the_demo_integrations(operator_client):
    response = operator_client.get("/admin/integrations/integration/")
    assert response.status_code == 200
    assert names_in(response) == [
        "page-analytics",
        "partner-search",
        "quick-insert-counter",  # the demo's block integration (examples/)
        "release-notes",
        "slack-notify",
        "webhook",
    ]


@pytest.mark.slow
@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("category=analytics", ["page-analytics"]),
        ("category=collaboration", ["slack-notify"]),
        ("visibility__exact=private", ["release-notes"]),
        ("visibility__exact=unlisted", ["partner-search"]),
        ("q=slack", ["slack-notify"]),
    ],
)
def test_the_catalogue_filters_and_searches(operator_client, query, expected):
    response = operator_client.get(f"/admin/integrations/integration/?{query}")
    assert names_in(response) == expected


@pytest.mark.slow
def test_filter_by_organization(operator_client):
    globex = Integration.objects.get(name="partner-search").organization
    response = operator_client.get(
        f"/admin/integrations/integration/?organization__id__exact={globex.pk}"
    )
    assert names_in(response) == ["partner-search"]


def test_a_version_shows_its_manifest_and_only_the_names_of_its_secrets(operator_client):
    version = IntegrationVersion.objects.get(integration__name="slack-notify")
    response = operator_client.get(f"/admin/integrations/integrationversion/{version.pk}/change/")
    assert response.status_code == 200
    page = response.content.decode()
    assert "CLIENT_ID, CLIENT_SECRET" in page
    assert "Slack workspace" in page  # the manifest, read-only
    assert "demo-secret" not in page and "demo-client-id" not in page


def test_integrations_cannot_be_edited_or_added_in_the_admin(operator_client):
    integration = Integration.objects.get(name="slack-notify")
    assert operator_client.get("/admin/integrations/integration/add/").status_code == 403
    response = operator_client.post(
        f"/admin/integrations/integration/{integration.pk}/change/", {"title": "Hacked"}
    )
    assert response.status_code == 403
    integration.refresh_from_db()
    assert integration.title == "Slack notifications"


@pytest.mark.slow
def test_a_version_cannot_be_modified():
    call_command("seed_demo", stdout=io.StringIO())
    version = IntegrationVersion.objects.first()
    version.number = 99
    with pytest.raises(Exception, match="immutable"):
        version.save()


def test_seed_demo_is_idempotent(demo):
    call_command("seed_demo", stdout=io.StringIO())
    # The four demo ones, the quick insert counter and the webhook one.
    assert IntegrationVersion.objects.count() == 6


def test_host_platform_admin_pages_render(operator_client):
    for model in ["organization", "membership", "space", "revision", "page", "site", "apitoken"]:
        response = operator_client.get(f"/admin/docplatform/{model}/")
        assert response.status_code == 200, model
