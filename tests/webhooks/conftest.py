"""Webhook installations for the delivery tests (the receiver: tests/conftest.py's)."""

import pytest

from integrations.models import Integration
from integrations.services.installations import installation_create
from tests.factories import SiteFactory


@pytest.fixture
def webhook_integration(db):
    return Integration.objects.get(name="webhook")


@pytest.fixture
def space_spec():
    return {"message": "first"}


@pytest.fixture
def site(organization, space):
    site = SiteFactory(organization=organization)
    site.spaces.add(space)
    return site


@pytest.fixture
def install_webhook(webhook_integration, org_admin, organization):
    def install(*, space=None, site=None, **configuration):
        return installation_create(
            user=org_admin,
            integration=webhook_integration,
            organization=organization,
            space=space,
            site=site,
            configuration=configuration,
        )

    return install
