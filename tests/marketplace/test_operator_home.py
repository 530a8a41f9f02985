"""The operator (staff, a member of no organization) signing in to the marketplace sees every
organization, read only, with a way to the admin: never "ask an admin of your organization"."""

import pytest

from tests.factories import MembershipFactory, OrganizationFactory, SpaceFactory, UserFactory

pytestmark = pytest.mark.django_db


def test_the_operator_sees_every_organization_and_the_way_to_the_admin(client):
    acme = OrganizationFactory(subdomain="acme", title="Acme")
    MembershipFactory(organization=acme)
    SpaceFactory(organization=acme)
    OrganizationFactory(subdomain="globex", title="Globex")
    client.force_login(UserFactory(is_staff=True))

    page = client.get("/marketplace/").content.decode()
    assert "ask an admin of your organization" not in page.lower()
    assert "<strong>Acme</strong>" in page and "<strong>Globex</strong>" in page
    assert f'href="/admin/docplatform/organization/{acme.pk}/change/"' in page
    assert 'href="/admin/"' in page
    row = page[page.index("<strong>Acme</strong>") :]
    assert [cell.split("</td>")[0] for cell in row.split("<td>")[1:4]] == ["1", "1", "0"]


def test_a_person_without_an_organization_is_told_to_ask_for_one(client):
    client.force_login(UserFactory())
    page = client.get("/marketplace/").content.decode()
    assert "Ask an admin of your organization to add you." in page
    assert "<strong>Acme</strong>" not in page
