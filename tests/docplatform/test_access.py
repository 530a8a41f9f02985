"""The one access module (``docplatform.access``): its table as people meet it, a role read
once per request, and no other module of the platform reading memberships."""

import ast
from pathlib import Path

import pytest
from django.core.exceptions import PermissionDenied
from django.http import Http404

from docplatform import access
from docplatform.access import Action
from tests.factories import MembershipFactory, OrganizationFactory, UserFactory

REPO = Path(__file__).resolve().parents[2]
APPS = ("docplatform", "integrations", "webhooks", "marketplace")
#: Defines memberships (the models); reads them (the access module); writes them (the teams'
#: services).
MEMBERSHIP_HOMES = {
    "docplatform/models.py",
    "docplatform/access.py",
    "docplatform/teams/services.py",
}


@pytest.mark.parametrize("action", list(Action))
@pytest.mark.parametrize("role", access.ROLES)
def test_each_role_may_do_what_the_table_says_and_no_more(people, organization, role, action):
    person = people[role]
    allowed = role in access.TABLE[action]
    assert access.may(person, action, organization) is allowed
    if allowed:
        access.require(person, action, organization)
    else:
        with pytest.raises(PermissionDenied) as refused:
            access.require(person, action, organization)
        assert "Only the organization's" in str(refused.value)


def test_readers_read_members_also_edit_and_create_spaces_admins_do_the_rest():
    assert access.TABLE[Action.READ] == {"admin", "member", "reader"}
    assert (
        access.TABLE[Action.EDIT_CONTENT]
        == access.TABLE[Action.CREATE_SPACE]
        == access.TABLE[Action.COMMENT]
        == {
            "admin",
            "member",
        }
    )
    assert (
        access.TABLE[Action.REVIEW_CHANGE_REQUEST]
        == access.TABLE[Action.MERGE_CHANGE_REQUEST]
        == access.TABLE[Action.PUBLISH_OPENAPI]
        == {"admin", "member"}
    )
    editors = {Action.EDIT_CONTENT, Action.CREATE_SPACE, Action.PUBLISH_OPENAPI}
    editors |= {Action.REVIEW_CHANGE_REQUEST, Action.MERGE_CHANGE_REQUEST}
    others = set(Action) - {Action.READ, Action.COMMENT} - editors
    assert all(access.TABLE[action] == {"admin"} for action in others)


@pytest.mark.parametrize("action", list(Action))
def test_someone_of_another_organization_is_told_nothing_exists(organization, action):
    stranger = MembershipFactory(organization=OrganizationFactory(subdomain="globex")).user
    assert not access.may(stranger, action, organization)
    with pytest.raises(Http404):
        access.require(stranger, action, organization)


def test_staff_and_superusers_get_nothing_from_the_table(organization):
    operator = UserFactory(is_staff=True, is_superuser=True)
    assert not any(access.may(operator, action, organization) for action in Action)


def test_members_install_integrations_that_write_nothing_only_when_the_organization_allows(
    people, organization
):
    member, reader = people["member"], people["reader"]
    assert not access.may_install(member, organization, writes=False)
    organization.members_may_install = True
    organization.save()
    assert access.may_install(member, organization, writes=False)
    assert not access.may_install(member, organization, writes=True)
    assert not access.may_install(reader, organization, writes=False)
    assert access.may_install(people["admin"], organization, writes=True)
    assert "writes" in access.install_refusal(organization, writes=True)


def test_readers_comment_only_in_a_space_that_lets_them(people, organization):
    from tests.factories import SpaceFactory

    space = SpaceFactory(organization=organization)
    reader = people["reader"]
    assert not access.may(reader, Action.COMMENT, space)
    space.readers_may_comment = True
    assert access.may(reader, Action.COMMENT, space)
    assert not access.may(reader, Action.EDIT_CONTENT, space)
    assert not access.may(people["outsider"], Action.COMMENT, space)


def test_a_role_is_read_once_per_request(people, organization, django_assert_num_queries):
    person = people["member"]
    with django_assert_num_queries(1):
        for action in Action:
            access.may(person, action, organization)
            access.may(person, action, organization.pk)


def test_a_new_request_sees_a_changed_role(people, organization):
    from docplatform.models import Membership
    from docplatform.teams.services import membership_ensure

    person = people["reader"]
    assert not access.may(person, Action.EDIT_CONTENT, organization)
    Membership.objects.filter(user=person).update(role="member")
    access.forget_roles(person)  # what a new request's user object starts with
    assert access.may(person, Action.EDIT_CONTENT, organization)
    membership_ensure(organization=organization, user=person, role="admin")  # already one
    assert access.role_of(person, organization) == "member"


def _membership_queries(path: Path) -> list[str]:
    """Where a module reads memberships: ``Membership.objects``, or a lookup through the
    ``memberships`` relation (``organization__memberships__user``, ``Count("memberships")``,
    ``organization.memberships``)."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if (
            isinstance(node, ast.Attribute)
            and node.attr == "objects"
            and isinstance(node.value, ast.Name)
            and node.value.id == "Membership"
        ):
            found.append(f"{path}:{node.lineno} Membership.objects")
        elif isinstance(node, ast.Attribute) and node.attr == "memberships":
            found.append(f"{path}:{node.lineno} .memberships")
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            if node.value == "memberships" or "memberships__" in node.value:
                found.append(f"{path}:{node.lineno} {node.value!r}")
        elif isinstance(node, ast.keyword) and node.arg and "memberships__" in node.arg:
            found.append(f"{path}:{node.lineno} {node.arg}=")
    return found


def test_no_module_but_the_access_module_reads_memberships():
    offenders = []
    for app in APPS:
        for path in sorted((REPO / app).rglob("*.py")):
            relative = path.relative_to(REPO).as_posix()
            if "/migrations/" in relative or relative in MEMBERSHIP_HOMES:
                continue
            offenders += _membership_queries(path)
    assert offenders == [], "memberships are read only in docplatform/access.py:\n" + "\n".join(
        offenders
    )


def test_the_check_finds_a_membership_query(tmp_path):
    planted = tmp_path / "selectors.py"
    planted.write_text(
        "def f(user):\n"
        "    Membership.objects.filter(user=user)\n"
        "    Space.objects.filter(organization__memberships__user=user)\n"
        "    Organization.objects.annotate(n=Count('memberships'))\n"
    )
    assert len(_membership_queries(planted)) == 3
