"""Pages of an organization's people: the Members page (``/orgs/<subdomain>/members/``) and
the page an invitation's link opens (``/invitations/<token>/``).

Every member sees the people and their roles; admins also invite, revoke open invitations,
change roles and remove people (others get the 403 page naming who may). The forms parse the
input; the teams' services decide, and what they refuse is shown at its field.
"""

from django.contrib import messages
from django.contrib.auth import login
from django.core.exceptions import ValidationError
from django.http import Http404, HttpResponse
from django.shortcuts import redirect, render
from django.views import View

from .. import access
from ..access import Action
from ..pages import OrganizationPage
from . import services
from .forms import AccountForm, InvitationForm, MemberRoleForm
from .selectors import invitation_by_token, invitation_of, invitations_open

#: The backend a new account is signed in with: ``login`` must be told one when several are
#: configured (the login throttle's and Django's), as the account was never authenticated.
SIGN_IN_BACKEND = "django.contrib.auth.backends.ModelBackend"


def a_role(role: str) -> str:
    return ("an " if role == access.ADMIN else "a ") + role


def add_service_errors(form, error: ValidationError) -> None:
    """A service's refusal, shown at the field it names (or above the form)."""
    for field, problems in error.message_dict.items():
        form.add_error(field if field in form.fields else None, problems)


class MembersPage(OrganizationPage):
    """GET: the organization's people and roles; for admins also the invite form and the
    open invitations."""

    nav = "members"

    def get(self, request):
        return self.members_page()

    def members_page(self, *, form=None, made=None, refused=None, status=200) -> HttpResponse:
        """``refused``: a role change refused, as (username, the reasons)."""
        manages = access.may(self.request.user, Action.MANAGE_MEMBERS, self.organization)
        context = {
            "members": access.members_of(self.organization),
            "manages": manages,
            "invitations": invitations_open(self.organization) if manages else [],
            "form": form or InvitationForm(),
            "made": made,
            "refused_username": refused[0] if refused else None,
            "refused_reasons": refused[1] if refused else [],
            "roles": MemberRoleForm.base_fields["role"].choices,
        }
        response = self.page("teams/members.html", context, status=status)
        response["Cache-Control"] = "no-store"  # a new invitation's link is shown once
        return response

    def back(self) -> HttpResponse:
        return redirect("teams:members", self.organization.subdomain)


class InvitePage(MembersPage):
    """POST: invite someone; the page shows the new link once, and whether the mail went."""

    action = Action.MANAGE_MEMBERS
    http_method_names = ["post"]

    def post(self, request):
        form = InvitationForm(request.POST)
        if not form.is_valid():
            return self.members_page(form=form, status=400)
        try:
            made = services.invitation_create(
                organization=self.organization, invited_by=request.user, **form.cleaned_data
            )
        except ValidationError as error:
            add_service_errors(form, error)
            return self.members_page(form=form, status=400)
        return self.members_page(made=made)


class InvitationRevokePage(MembersPage):
    action = Action.MANAGE_MEMBERS
    http_method_names = ["post"]

    def post(self, request, invitation_id):
        invitation = invitation_of(self.organization, invitation_id)
        if invitation is None:
            raise Http404("No such invitation.")
        try:
            services.invitation_revoke(invitation=invitation, actor=request.user)
        except ValidationError as error:
            messages.error(request, " ".join(error.messages))
        else:
            messages.success(request, f"The invitation to {invitation.email} is revoked.")
        return self.back()


class MemberRolePage(MembersPage):
    action = Action.MANAGE_MEMBERS
    http_method_names = ["post"]

    def post(self, request, username):
        form = MemberRoleForm(request.POST)
        if not form.is_valid():
            return self.members_page(refused=(username, form.errors["role"]), status=400)
        try:
            membership = services.membership_role_change(
                organization=self.organization,
                username=username,
                role=form.cleaned_data["role"],
                actor=request.user,
            )
        except ValidationError as error:
            return self.members_page(refused=(username, error.messages), status=400)
        messages.success(request, f"{username} is now {a_role(membership.role)}.")
        return self.back()


class MemberRemovePage(MembersPage):
    """GET: confirm the removal, naming who and what they lose; POST: remove."""

    action = Action.MANAGE_MEMBERS

    def get(self, request, username):
        return self.confirmation(username)

    def post(self, request, username):
        try:
            services.membership_remove(
                organization=self.organization, username=username, actor=request.user
            )
        except ValidationError as error:
            return self.confirmation(username, errors=error.messages, status=400)
        messages.success(request, f"{username} is no longer a member of {self.organization.title}.")
        if username == request.user.get_username():
            return redirect("docs:spaces")
        return self.back()

    def confirmation(self, username: str, *, errors=(), status=200) -> HttpResponse:
        membership = access.membership_of(self.organization, username)
        if membership is None:
            raise Http404("No such member.")
        context = {"membership": membership, "errors": errors}
        return self.page("teams/member_remove.html", context, status=status)


class InvitationPage(View):
    """The page an invitation's link opens. A signed-in person joins with one button; anyone
    else makes an account here (then signed in) and joins. A link used, revoked or expired
    says which (410) and grants nothing; a token no invitation has is a 404, which tells
    nothing of any organization."""

    def dispatch(self, request, token):
        self.invitation = invitation_by_token(token)
        if self.invitation is None:
            raise Http404("No such invitation.")
        if self.invitation.state != "open":
            return self.gone(self.invitation.state)
        return super().dispatch(request, token)

    def get(self, request, token):
        return self.invitation_page(AccountForm())

    def post(self, request, token):
        form = AccountForm(request.POST)
        try:
            if request.user.is_authenticated:
                membership, joined = services.invitation_accept(token=token, user=request.user)
            else:
                if not form.is_valid():
                    return self.invitation_page(form, status=400)
                user, membership = services.invitation_accept_new_account(
                    token=token, **form.cleaned_data
                )
                login(request, user, backend=SIGN_IN_BACKEND)
                joined = True
        except services.InvitationGone as gone:
            return self.gone(gone.state)
        except ValidationError as error:
            add_service_errors(form, error)
            return self.invitation_page(form, status=400)
        title, role = membership.organization.title, a_role(membership.role)
        if joined:
            messages.success(request, f"Welcome to {title}: you joined it as {role}.")
        else:
            messages.info(request, f"You were in {title} already: you stay {role}.")
        return redirect("docs:spaces")

    def invitation_page(self, form, *, status=200) -> HttpResponse:
        invitation = self.invitation
        context = {
            "invitation": invitation,
            "invited_to": invitation.organization,
            "role_now": access.role_of(self.request.user, invitation.organization),
            "form": form,
        }
        return render(self.request, "teams/invitation.html", context, status=status)

    def gone(self, state: str) -> HttpResponse:
        context = {"state": state, "reason": services.InvitationGone.REASONS[state]}
        return render(self.request, "teams/invitation_gone.html", context, status=410)
