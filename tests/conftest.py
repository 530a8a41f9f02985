import pytest

from tests.factories import MembershipFactory, OrganizationFactory, UserFactory


@pytest.fixture
def organization(db):
    return OrganizationFactory(subdomain="acme")


@pytest.fixture
def org_admin(organization):
    return MembershipFactory(organization=organization, role="admin").user


@pytest.fixture
def org_member(organization):
    return MembershipFactory(organization=organization, role="member").user


@pytest.fixture
def outsider(db):
    return UserFactory()
