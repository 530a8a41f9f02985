"""Writes of an organization's people: the one place memberships are made, changed and
removed (``docplatform.access`` is the one place they are read), and the invitations that
bring people in. Every change leaves one row of the audit log, in its own transaction.

Callers check who may act with ``access`` (admins manage members and invitations); the
services that change an existing member check again under the organization's lock, so an
admin demoted a moment ago changes nobody.
"""

import logging
from dataclasses import dataclass
from datetime import timedelta

from django.conf import settings
from django.contrib.auth import get_user_model
from django.contrib.auth.models import BaseUserManager
from django.contrib.auth.password_validation import validate_password
from django.core.exceptions import ValidationError
from django.core.mail import send_mail
from django.core.validators import validate_email
from django.db import IntegrityError, transaction
from django.http import Http404
from django.template.loader import render_to_string
from django.urls import reverse
from django.utils import timezone

from .. import access
from ..audit.services import audit_record
from ..models import Membership, Organization
from .models import Invitation

logger = logging.getLogger(__name__)

EMAIL_MAX_LENGTH = 254
USERNAME_TAKEN = "That username is taken: choose another one."


@transaction.atomic
def membership_ensure(*, organization: Organization, user, role: str) -> Membership:
    """Make ``user`` a member of the organization with ``role`` unless they are one already
    (whatever their role): for the platform's own organizations and the demo data, which
    operators' commands set up. People join through invitations (``invitation_accept``)."""
    membership, _ = Membership.objects.get_or_create(
        organization=organization, user=user, defaults={"role": role}
    )
    access.forget_roles(user)
    return membership


# --- Invitations ----------------------------------------------------------------------------


@dataclass
class InvitationMade:
    """A new invitation and its link: the link is given to the admin who invited (only its
    token's hash is stored) and mailed to the invited address. ``email_sent`` is known once
    the transaction that made the invitation has committed."""

    invitation: Invitation
    url: str
    email_sent: bool = False


class InvitationGone(Exception):
    """The link was used, revoked or has expired: it grants nothing (the views answer 410)."""

    REASONS = {
        "accepted": "This invitation was used already: an invitation's link works once.",
        "revoked": "This invitation was revoked by an admin of the organization.",
        "expired": "This invitation has expired.",
    }

    def __init__(self, state: str):
        self.state = state
        super().__init__(self.REASONS[state])


def invitation_url(token: str) -> str:
    return settings.PLATFORM_URL + reverse("teams:invitation", args=[token])


def _role_checked(role) -> str:
    if role not in access.ROLES:
        raise ValidationError({"role": [f"Choose one of {', '.join(access.ROLES)}."]})
    return role


def _email_checked(email) -> str:
    email = BaseUserManager.normalize_email(str(email or "").strip())
    if not email:
        raise ValidationError({"email": ["Give the e-mail address to invite."]})
    if len(email) > EMAIL_MAX_LENGTH:
        raise ValidationError({"email": [f"At most {EMAIL_MAX_LENGTH} characters."]})
    try:
        validate_email(email)
    except ValidationError as error:
        raise ValidationError({"email": error.messages}) from None
    return email


def invitation_create(
    *, organization: Organization, email: str, role: str, invited_by, notify: bool = True
) -> InvitationMade:
    """Invite ``email`` to join with ``role``: a link that works once, for ``INVITATION_DAYS``
    days, mailed after the commit (unless ``notify`` is off: the demo data prints it). A mail
    server that fails loses no invitation: ``email_sent`` says so, and the link is still
    given to the admin who invited."""
    errors = {}
    try:
        email = _email_checked(email)
    except ValidationError as error:
        errors.update(error.message_dict)
    try:
        role = _role_checked(role)
    except ValidationError as error:
        errors.update(error.message_dict)
    if errors:
        raise ValidationError(errors)
    token = Invitation.generate_token()
    with transaction.atomic():
        invitation = Invitation.objects.create(
            organization=organization,
            email=email,
            role=role,
            token_hash=Invitation.hash_token(token),
            invited_by=invited_by if access.is_person(invited_by) else None,
            expires_at=timezone.now() + timedelta(days=settings.INVITATION_DAYS),
        )
        audit_record(
            action="invitation.created",
            actor=invited_by,
            target=invitation,
            target_label=email,
            details={"email": email, "role": role, "expiresAt": invitation.expires_at.isoformat()},
        )
        made = InvitationMade(invitation=invitation, url=invitation_url(token))
        if notify:
            transaction.on_commit(lambda: _invitation_mail_send(made))
    return made


def _invitation_mail_send(made: InvitationMade) -> None:
    invitation = made.invitation
    context = {
        "organization": invitation.organization,
        "role": invitation.role,
        "invited_by": invitation.invited_by,
        "url": made.url,
        "expires_at": invitation.expires_at,
    }
    subject = f"Join {invitation.organization.title} on docplatform"
    body = render_to_string("teams/invitation_email.txt", context)
    try:
        send_mail(subject, body, None, [invitation.email])
    except OSError:  # smtplib's errors, refused connections, timeouts, TLS failures
        logger.warning(
            "The invitation mail to %s (invitation %s) could not be sent",
            invitation.email,
            invitation.pk,
            exc_info=True,
        )
        return
    made.email_sent = True


@transaction.atomic
def invitation_revoke(*, invitation: Invitation, actor) -> Invitation:
    """Stop an open invitation's link at once. One revoked or expired already is left as it
    is (nothing is written); one accepted cannot be: its person is a member now."""
    invitation = Invitation.objects.select_for_update(no_key=True).get(pk=invitation.pk)
    if invitation.state == "accepted":
        raise ValidationError(
            {"invitation": ["It was accepted already: remove the member instead."]}
        )
    if invitation.state != "open":
        return invitation
    invitation.revoked_at = timezone.now()
    invitation.save(update_fields=["revoked_at"])
    audit_record(
        action="invitation.revoked",
        actor=actor,
        target=invitation,
        target_label=invitation.email,
        details={"email": invitation.email, "role": invitation.role},
    )
    return invitation


def _invitation_to_accept(token: str) -> Invitation:
    """The open invitation of ``token``, its row locked until the transaction ends: two
    accepts of one link at once grant once (the second waits, then finds it used)."""
    invitation = (
        Invitation.objects.select_for_update(of=("self",), no_key=True)
        .select_related("organization")
        .filter(token_hash=Invitation.hash_token(token))
        .first()
    )
    if invitation is None:
        raise Http404("No such invitation.")
    if invitation.state != "open":
        raise InvitationGone(invitation.state)
    return invitation


def _join(invitation: Invitation, user) -> tuple[Membership, bool]:
    membership, joined = Membership.objects.get_or_create(
        organization=invitation.organization, user=user, defaults={"role": invitation.role}
    )
    invitation.accepted_at = timezone.now()
    invitation.accepted_by = user
    invitation.save(update_fields=["accepted_at", "accepted_by"])
    access.forget_roles(user)
    details = {"email": invitation.email, "role": membership.role, "joined": joined}
    audit_record(
        action="invitation.accepted",
        actor=user,
        target=invitation,
        target_label=invitation.email,
        details=details,
    )
    return membership, joined


@transaction.atomic
def invitation_accept(*, token: str, user) -> tuple[Membership, bool]:
    """``user`` joins with the invited role; True when they joined, False when they were a
    member already. An existing member keeps the role they have (the link is used up all the
    same): a role changes only by an admin's change, which the audit log records as such."""
    return _join(_invitation_to_accept(token), user)


@transaction.atomic
def invitation_accept_new_account(
    *, token: str, username: str, password: str, password2: str
) -> tuple[object, Membership]:
    """Someone without an account accepts: the account (the invited e-mail address its own)
    and the membership are made together, or neither. Returns the user and the membership."""
    invitation = _invitation_to_accept(token)
    user = _account_create(
        username=username, email=invitation.email, password=password, password2=password2
    )
    membership, _ = _join(invitation, user)
    return user, membership


def _account_create(*, username: str, email: str, password: str, password2: str):
    """A new account, checked as Django's sign-up form checks one: the username's characters
    and length, not taken in any letter case, the password by ``AUTH_PASSWORD_VALIDATORS``."""
    model = get_user_model()
    username = model.normalize_username(str(username or "").strip())
    errors = {}
    if not username:
        errors["username"] = ["Choose a username."]
    else:
        try:
            model._meta.get_field(model.USERNAME_FIELD).run_validators(username)
        except ValidationError as error:
            errors["username"] = error.messages
        else:
            if model.objects.filter(**{f"{model.USERNAME_FIELD}__iexact": username}).exists():
                errors["username"] = [USERNAME_TAKEN]
    user = model(**{model.USERNAME_FIELD: username, "email": email})
    if not password:
        errors["password"] = ["Choose a password."]
    else:
        try:
            validate_password(password, user)
        except ValidationError as error:
            errors["password"] = error.messages
        if password != password2:
            errors["password2"] = ["The two passwords differ."]
    if errors:
        raise ValidationError(errors)
    user.set_password(password)
    try:
        with transaction.atomic():
            user.save()
    except IntegrityError:  # taken by someone else since the check
        raise ValidationError({"username": [USERNAME_TAKEN]}) from None
    return user


# --- Members and roles ----------------------------------------------------------------------


def _member_to_change(organization: Organization, username: str, actor) -> Membership:
    """The member ``username``, with the organization's row locked until the transaction
    ends: changes of its people go one at a time, so two admins demoting or removing each
    other at once cannot leave it without an admin. The actor must still be one of its admins
    once the lock is held, unless an operator acts (None: a command; a superuser who is not a
    member: the Django admin, as the audit log counts them)."""
    Organization.objects.select_for_update(no_key=True).get(pk=organization.pk)
    access.forget_roles(actor)
    role = access.role_of(actor, organization)
    operator = actor is None or (role is None and getattr(actor, "is_superuser", False))
    if not operator:
        access.require(actor, access.Action.MANAGE_MEMBERS, organization)
    membership = access.membership_of(organization, username)
    if membership is None:
        raise Http404("No such member.")
    return membership


def _last_admin(organization: Organization, membership: Membership) -> bool:
    return membership.role == access.ADMIN and access.admin_count(organization) == 1


@transaction.atomic
def membership_role_change(
    *, organization: Organization, username: str, role: str, actor
) -> Membership:
    """Give the member ``username`` another role; the last admin cannot be demoted (the
    organization would have nobody to manage it)."""
    role = _role_checked(role)
    membership = _member_to_change(organization, username, actor)
    previous = membership.role
    if previous == role:
        return membership
    if _last_admin(organization, membership):
        raise ValidationError(
            {
                "role": [
                    f"{username} is the last admin of {organization.title}: make another "
                    "member an admin first."
                ]
            }
        )
    membership.role = role
    membership.save(update_fields=["role"])
    access.forget_roles(membership.user)
    access.forget_roles(actor)
    audit_record(
        action="member.role_changed",
        actor=actor,
        target=membership.user,
        organization=organization,
        target_label=username,
        details={"from": previous, "to": role},
    )
    return membership


@transaction.atomic
def membership_remove(*, organization: Organization, username: str, actor) -> None:
    """Remove the member ``username``: their sessions and personal tokens reach nothing of
    the organization from the next request on. The last admin cannot be removed."""
    membership = _member_to_change(organization, username, actor)
    if _last_admin(organization, membership):
        raise ValidationError(
            {
                "username": [
                    f"{username} is the last admin of {organization.title} and cannot be "
                    "removed: make another member an admin first."
                ]
            }
        )
    role, user = membership.role, membership.user
    membership.delete()
    access.forget_roles(user)
    access.forget_roles(actor)
    audit_record(
        action="member.removed",
        actor=actor,
        target=user,
        organization=organization,
        target_label=username,
        details={"role": role},
    )
