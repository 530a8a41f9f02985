"""Two requests at once, each in its own thread and database connection: one link accepted
twice grants once, and two admins demoting each other leave the organization an admin."""

import threading

import pytest
from django.contrib.auth import get_user_model
from django.core.exceptions import PermissionDenied, ValidationError
from django.db import connection

from docplatform import access
from docplatform.audit.models import AuditEntry
from docplatform.teams import services
from docplatform.teams.models import Invitation
from tests.factories import MembershipFactory, UserFactory

from .conftest import STRONG_PASSWORD, token_of

pytestmark = pytest.mark.django_db(transaction=True)


def at_once(*calls) -> list:
    """Run ``calls`` in threads released together; what each returned or raised."""
    barrier = threading.Barrier(len(calls), timeout=30)
    outcomes = [None] * len(calls)

    def run(index, call):
        barrier.wait()
        try:
            outcomes[index] = call()
        except Exception as error:  # what the call raised is its outcome
            outcomes[index] = error
        finally:
            connection.close()

    threads = [threading.Thread(target=run, args=pair) for pair in enumerate(calls)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    return outcomes


def test_one_link_accepted_twice_at_once_grants_once(org_admin, organization):
    made = services.invitation_create(
        organization=organization, email="erin@example.com", role="admin", invited_by=org_admin
    )
    token = token_of(made.url)
    erin, mallory = UserFactory(username="erin"), UserFactory(username="mallory")

    outcomes = at_once(
        lambda: services.invitation_accept(token=token, user=erin),
        lambda: services.invitation_accept(token=token, user=mallory),
    )

    gone = [outcome for outcome in outcomes if isinstance(outcome, services.InvitationGone)]
    assert len(gone) == 1 and gone[0].state == "accepted", outcomes
    admins = {m.user.username for m in access.members_of(organization) if m.role == "admin"}
    assert len(admins - {org_admin.username}) == 1
    assert AuditEntry.objects.filter(action="invitation.accepted").count() == 1


def test_one_link_making_two_accounts_at_once_makes_one(org_admin, organization):
    made = services.invitation_create(
        organization=organization, email="erin@example.com", role="member", invited_by=org_admin
    )
    token = token_of(made.url)

    def new_account(username):
        return lambda: services.invitation_accept_new_account(
            token=token, username=username, password=STRONG_PASSWORD, password2=STRONG_PASSWORD
        )

    outcomes = at_once(new_account("erin"), new_account("erin2"))

    assert sum(isinstance(outcome, services.InvitationGone) for outcome in outcomes) == 1
    made_users = get_user_model().objects.filter(username__in=["erin", "erin2"])
    assert made_users.count() == 1
    assert Invitation.objects.get().accepted_by == made_users.get()


def test_two_admins_demoting_each_other_at_once_leave_one_admin(org_admin, organization):
    other = MembershipFactory(organization=organization, role="admin").user

    def demote(actor, username):
        return lambda: services.membership_role_change(
            organization=organization, username=username, role="member", actor=actor
        )

    outcomes = at_once(demote(org_admin, other.username), demote(other, org_admin.username))

    refused = [o for o in outcomes if isinstance(o, PermissionDenied | ValidationError)]
    assert len(refused) == 1, outcomes
    assert access.admin_count(organization) == 1
    assert AuditEntry.objects.filter(action="member.role_changed").count() == 1
