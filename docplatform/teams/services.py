"""Writes of an organization's people: the one place memberships are made, changed and
removed (``docplatform.access`` is the one place they are read)."""

from django.db import transaction

from ..access import forget_roles
from ..models import Membership, Organization


@transaction.atomic
def membership_ensure(*, organization: Organization, user, role: str) -> Membership:
    """Make ``user`` a member of the organization with ``role`` unless they are one already
    (whatever their role): for the platform's own organizations and the demo data, which
    operators' commands set up. People join through invitations (``invitation_accept``)."""
    membership, _ = Membership.objects.get_or_create(
        organization=organization, user=user, defaults={"role": role}
    )
    forget_roles(user)
    return membership
