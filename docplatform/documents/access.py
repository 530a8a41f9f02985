"""Who may do what with a space: one home for each rule, asked by the reader, the editor,
the REST API and the admin alike.

- read: the organization's members (any role); anyone at all when the space is public or
  unlisted (unlisted spaces are not listed, but their address opens them);
- edit (pages, revisions, restore): the organization's admins and members, not its readers;
- administer (the space's title and visibility): the organization's admins.
"""

from ..models import Membership, Space

EDITING_ROLES = (Membership.Role.ADMIN, Membership.Role.MEMBER)
OPEN_VISIBILITIES = (Space.Visibility.PUBLIC, Space.Visibility.UNLISTED)


def is_person(user) -> bool:
    """A signed-in person (not an anonymous visitor, not an installation's token)."""
    return user is not None and user.is_authenticated and not getattr(user, "is_machine", False)


def role_in(user, organization_id: str) -> str | None:
    """The user's role in the organization, or None for anyone who is not a member."""
    if not is_person(user):
        return None
    return (
        Membership.objects.filter(user=user, organization_id=organization_id)
        .values_list("role", flat=True)
        .first()
    )


def may_read(role: str | None, space: Space) -> bool:
    return role is not None or space.visibility in OPEN_VISIBILITIES


def may_edit(role: str | None) -> bool:
    return role in EDITING_ROLES


def may_administer(role: str | None) -> bool:
    return role == Membership.Role.ADMIN


def edit_refusal(role: str | None) -> str:
    """Why a person with ``role`` may not edit a space's pages."""
    if role == Membership.Role.READER:
        return "readers of the organization may read its spaces, not edit them"
    return "only the organization's admins and members may edit its spaces"
