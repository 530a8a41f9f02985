"""People of the documentation tests: alice (an admin of acme) and carol (a member)."""

import pytest

from tests.factories import MembershipFactory, UserFactory


@pytest.fixture
def alice(organization):
    user = UserFactory(username="alice")
    return MembershipFactory(organization=organization, user=user, role="admin").user


@pytest.fixture
def carol(organization):
    user = UserFactory(username="carol")
    return MembershipFactory(organization=organization, user=user, role="member").user
