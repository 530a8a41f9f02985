"""What a call's reads take in one statement with the installation
(``endpoint_selectors._for_call``): the spaces its organization installation selected, the
same as read on their own, for the organization installation and for a space installation
under it, none selected and several; and for a person's call, the person's role, which the
action's check then reads no more."""

import pytest

from integrations.endpoint_selectors import installation_for_call, installation_visible_for_call
from integrations.environment import environment_for
from integrations.models import Installation
from integrations.policies import running_version
from integrations.services.installations import installation_create, installation_select_spaces
from tests.factories import SpaceFactory

pytestmark = pytest.mark.django_db


def spaces_told(installation: Installation) -> list[str]:
    version = running_version(installation.integration, installation)
    return environment_for(version, installation)["installation"]["space_selection"]["spaces"]


def test_the_selected_spaces_read_with_the_installation_are_those_stored(
    publish, org_admin, organization, space
):
    integration = publish(org_admin, name="told-spaces", scopes=["space:content:read"])
    parent = installation_create(user=org_admin, integration=integration, organization=organization)
    local = installation_create(
        user=org_admin, integration=integration, organization=organization, space=space
    )
    assert spaces_told(installation_for_call(parent.pk)) == []
    chosen = sorted([space, *SpaceFactory.create_batch(2, organization=organization)], key=str)
    installation_select_spaces(
        user=org_admin, installation=parent, space_selection="selected", spaces=chosen
    )
    expected = sorted(chosen_space.pk for chosen_space in chosen)
    for read in (
        installation_for_call(parent.pk),
        installation_for_call(local.pk),  # its organization installation's selection
        installation_visible_for_call(org_admin, local.pk),
        Installation.objects.get(pk=local.pk),  # not read for a call: read on their own
    ):
        assert spaces_told(read) == expected


@pytest.mark.parametrize("role", ["admin", "member", "reader"])
def test_a_persons_role_is_read_with_the_installation_and_not_again(
    publish, org_admin, organization, role, django_assert_num_queries
):
    from docplatform.access import role_of
    from tests.factories import MembershipFactory

    integration = publish(org_admin, name="role-read", scopes=["space:content:read"])
    installation = installation_create(
        user=org_admin, integration=integration, organization=organization
    )
    person = MembershipFactory(organization=organization, role=role).user
    with django_assert_num_queries(1):
        read = installation_visible_for_call(person, installation.pk)
        assert role_of(person, read) == role
    assert installation_visible_for_call(MembershipFactory().user, installation.pk) is None
