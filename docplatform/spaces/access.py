"""What the documentation pages ask of a person's role in a space's organization: the rules
are the access module's table (``docplatform.access``); these name them as the reader, the
editor, the history and the settings use them."""

from .. import access
from ..access import Action, is_person, may_read_space, role_of

__all__ = ["edit_refusal", "is_person", "may_administer", "may_edit", "may_read", "role_in"]


def role_in(user, organization_id: str) -> str | None:
    """The user's role in the organization, or None for anyone who is not a member."""
    return role_of(user, organization_id)


def may_read(role: str | None, space) -> bool:
    return may_read_space(role, space)


def may_edit(role: str | None) -> bool:
    return access.role_may(role, Action.EDIT_CONTENT)


def may_administer(role: str | None) -> bool:
    return access.role_may(role, Action.MANAGE_SPACE)


def edit_refusal(role: str | None) -> str:
    """Why a person with ``role`` may not edit a space's pages."""
    if role == access.READER:
        return "readers of the organization may read its spaces, not edit them"
    return "only the organization's admins and members may edit its spaces"
