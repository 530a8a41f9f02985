"""What every organization page of the host builds on (Members, Sites, Audit log, ...): the
sign-in, the organization the page acts for (one of the person's, else 404), the top bar's
organization switcher, and the role the page asks for (``access.require``: 403 naming who may,
rendered by ``templates/403.html``)."""

from django.contrib.auth.mixins import LoginRequiredMixin
from django.http import Http404, HttpResponse
from django.shortcuts import render
from django.urls import NoReverseMatch, reverse, reverse_lazy
from django.views import View

from . import access


class PersonPage(LoginRequiredMixin, View):
    """A page behind the sign-in."""

    login_url = reverse_lazy("marketplace:login")
    nav = ""  # the top bar's section this page belongs to

    def page(self, template: str, context: dict, *, status: int = 200) -> HttpResponse:
        current = context.get("organization")
        context["nav"] = self.nav
        context["other_organizations"] = [
            (organization, self.switch_url(organization))
            for organization in access.organizations_of(self.request.user)
            if current is None or organization.pk != current.pk
        ]
        return render(self.request, template, context, status=status)

    def switch_url(self, organization) -> str:
        return reverse("marketplace:catalogue", args=[organization.subdomain])


class OrganizationPage(PersonPage):
    """A page of one organization, ``<prefix>/<subdomain>/...``: for its people whose role
    allows ``action`` (``access.Action``); 404 for everyone else."""

    action: access.Action = access.Action.READ

    def dispatch(self, request, *args, **kwargs):
        if not request.user.is_authenticated:
            return self.handle_no_permission()
        subdomain = kwargs.pop("organization")
        mine = access.organizations_of(request.user)
        self.organization = mine.filter(subdomain=subdomain).first()
        if self.organization is None:
            raise Http404("No such organization.")
        self.role = self.organization.role
        access.require(request.user, self.action, self.organization)
        return super().dispatch(request, *args, **kwargs)

    def page(self, template: str, context: dict, *, status: int = 200) -> HttpResponse:
        context = {"organization": self.organization, "role": self.role, **context}
        return super().page(template, context, status=status)

    def switch_url(self, organization) -> str:
        name = self.request.resolver_match.view_name
        try:
            return reverse(name, args=[organization.subdomain])
        except NoReverseMatch:  # the page needs more than the organization: its catalogue
            return super().switch_url(organization)
