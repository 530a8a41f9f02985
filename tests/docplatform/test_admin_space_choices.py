"""The admin's site form names each space with its organization: two spaces of the same
title in two organizations are told apart."""

import html

import pytest
from django.contrib.auth import get_user_model

from tests.factories import OrganizationFactory, SiteFactory, SpaceFactory

pytestmark = pytest.mark.django_db


@pytest.fixture
def operator_client(client):
    client.force_login(
        get_user_model().objects.create_superuser("operator", "operator@example.com", "pw")
    )
    return client


def test_the_site_forms_spaces_name_their_organization(operator_client):
    acme = OrganizationFactory(subdomain="acme")
    globex = OrganizationFactory(subdomain="globex")
    acme_reference = SpaceFactory(organization=acme, title="API reference")
    globex_reference = SpaceFactory(organization=globex, title="API reference")
    site = SiteFactory(organization=acme, title="Acme docs")
    site.spaces.set([acme_reference])

    for address in ["/admin/docplatform/site/add/", f"/admin/docplatform/site/{site.pk}/change/"]:
        page = html.unescape(operator_client.get(address).content.decode())
        assert f'<option value="{acme_reference.pk}">API reference (acme)</option>' in page
        assert f'<option value="{globex_reference.pk}">API reference (globex)</option>' in page
    change = html.unescape(
        operator_client.get(f"/admin/docplatform/site/{site.pk}/change/").content.decode()
    )
    assert f'<option value="{acme_reference.pk}" selected>API reference (acme)</option>' in change
