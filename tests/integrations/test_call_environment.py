"""What a call's reads take in one statement with the installation
(``endpoint_selectors._for_call``): the spaces its organization installation selected, the
same as read on their own, for the organization installation and for a space installation
under it, none selected and several; for a person's call, the person's role, which the
action's check then reads no more; and for a component's call, the instance it renders.
The versions a call may run are read once per process and kept (they are immutable)."""

import pytest

from integrations.endpoint_selectors import (
    UNREAD,
    installation_for_call,
    installation_visible_for_call,
    stored_instance_of,
)
from integrations.environment import environment_for
from integrations.models import ComponentState, Installation
from integrations.policies import running_version
from integrations.services.installations import installation_create, installation_select_spaces
from tests.factories import MembershipFactory, SpaceFactory

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

    integration = publish(org_admin, name="role-read", scopes=["space:content:read"])
    installation = installation_create(
        user=org_admin, integration=integration, organization=organization
    )
    person = MembershipFactory(organization=organization, role=role).user
    installation_for_call(installation.pk)  # the process reads and keeps the version
    with django_assert_num_queries(1):
        read = installation_visible_for_call(person, installation.pk)
        assert role_of(person, read) == role
    assert installation_visible_for_call(MembershipFactory().user, installation.pk) is None


def test_the_instance_read_with_the_installation_is_the_one_asked_for(
    publish, org_admin, organization, space, django_assert_num_queries
):
    integration = publish(org_admin, name="instance-read", scopes=["space:content:read"])
    mine = installation_create(user=org_admin, integration=integration, organization=organization)
    other = installation_create(
        user=org_admin, integration=integration, organization=organization, space=space
    )

    def store(installation, component_id, instance, count):
        return ComponentState.objects.create(
            installation=installation,
            component_id=component_id,
            instance=instance,
            props={"label": component_id},
            state={"count": count},
            revision=count,
        )

    asked = store(mine, "counter", "b1", 3)
    store(mine, "other-block", "b1", 5)  # the same instance name, another component's
    store(other, "counter", "b1", 7)  # the same component and name, another installation's
    installation_for_call(mine.pk)  # the process reads and keeps the version
    with django_assert_num_queries(1):
        read = installation_visible_for_call(org_admin, mine.pk, instance_of=("counter", "b1"))
    stored = stored_instance_of(read, "counter", "b1")
    assert (stored.pk, stored.props, stored.state, stored.revision) == (
        asked.pk,
        {"label": "counter"},
        {"count": 3},
        3,
    )
    assert (stored.installation_id, stored.component_id, stored.instance) == (
        mine.pk,
        "counter",
        "b1",
    )
    assert stored_instance_of(read, "counter", "b2") is UNREAD  # not the one read
    assert stored_instance_of(read, "other-block", "b1") is UNREAD
    none_yet = installation_visible_for_call(org_admin, mine.pk, instance_of=("counter", "new"))
    assert stored_instance_of(none_yet, "counter", "new") is None  # read: none is stored
    assert (
        installation_visible_for_call(
            MembershipFactory().user, mine.pk, instance_of=("counter", "b1")
        )
        is None
    )  # a stranger: nothing, the instance neither
    # A name no row can hold (a NUL from the URL's %00): none stored, never sent to the database.
    odd = installation_visible_for_call(org_admin, mine.pk, instance_of=("a\x00b", "b1"))
    assert odd.pk == mine.pk
    assert stored_instance_of(odd, "a\x00b", "b1") is None


def test_the_versions_are_read_once_and_a_new_one_when_published(
    publish, org_admin, organization, django_assert_num_queries, monkeypatch
):
    from integrations import endpoint_selectors

    integration = publish(org_admin, name="kept-versions", scopes=["space:content:read"])
    installation = installation_create(
        user=org_admin, integration=integration, organization=organization
    )
    with django_assert_num_queries(2):  # the installation, then the version it lacked
        first = installation_for_call(installation.pk)
    with django_assert_num_queries(1):  # the version kept
        again = installation_for_call(installation.pk)
    version = again.integration.released_version
    assert version.pk == integration.released_version_id
    assert version.manifest["name"] == "kept-versions"
    assert version.integration is again.integration  # linked, not read again
    assert version is not first.integration.released_version  # a new instance per call
    assert running_version(again.integration, again) == version

    republished = publish(
        org_admin, name="kept-versions", scopes=["space:content:read"], description="Changed."
    )
    assert republished.released_version_id != version.pk
    with django_assert_num_queries(2):  # the new version is read
        after = installation_for_call(installation.pk)
    running = running_version(after.integration, after)
    assert (running.pk, running.manifest["description"]) == (
        republished.released_version_id,
        "Changed.",
    )
    with django_assert_num_queries(1):
        assert installation_for_call(installation.pk).integration.released_version.number == 2

    # At most VERSIONS_KEPT are kept, the least recently used given up first.
    monkeypatch.setattr(endpoint_selectors, "VERSIONS_KEPT", 1)
    other = publish(org_admin, name="kept-other", scopes=["space:content:read"])
    other_installation = installation_create(
        user=org_admin, integration=other, organization=organization
    )
    with django_assert_num_queries(2):
        installation_for_call(other_installation.pk)
    with django_assert_num_queries(2):  # given up for the other one
        installation_for_call(installation.pk)


def test_nobody_but_a_member_sees_an_installation_read_for_a_call(publish, org_admin, organization):
    from django.contrib.auth.models import AnonymousUser

    from integrations.authentication import InstallationPrincipal

    integration = publish(org_admin, name="members-only", scopes=["space:content:read"])
    installation = installation_create(
        user=org_admin, integration=integration, organization=organization
    )
    assert installation_visible_for_call(org_admin, installation.pk).pk == installation.pk
    # Integration code (even the installation's own) and anonymous visitors see none: their
    # ids are no user's (an installation principal's is text), and no statement is sent.
    for caller in (InstallationPrincipal(installation), AnonymousUser()):
        assert installation_visible_for_call(caller, installation.pk) is None
