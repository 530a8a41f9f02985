"""The marketplace pages. Thin: forms parse, services write, selectors read.

Every page acts for one organization the signed-in user belongs to; anything outside it
(another organization, its installations, spaces and sites, a hidden integration) is a 404.
This module holds what every page builds on (the sign-in, the organization switcher, the
organization a page acts for) and the home page; the pages themselves are in
``catalogue_views``, ``install_views``, ``installation_views``, ``component_views`` and
``token_views``.
"""

from django.contrib.auth.mixins import LoginRequiredMixin
from django.http import HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse, reverse_lazy
from django.views import View

from . import selectors


class MemberView(LoginRequiredMixin, View):
    """A page behind the sign-in, with the organizations the user may act for."""

    login_url = reverse_lazy("marketplace:login")

    def page(self, template: str, context: dict, *, status: int = 200) -> HttpResponse:
        """Render ``template`` with links to the user's other organizations (the switcher)."""
        current = context.get("organization")
        context["other_organizations"] = [
            (organization, self.switch_url(organization))
            for organization in selectors.organizations_of(self.request.user)
            if current is None or organization.pk != current.pk
        ]
        return render(self.request, template, context, status=status)

    def switch_url(self, organization) -> str:
        return reverse("marketplace:catalogue", args=[organization.subdomain])


class OrganizationView(MemberView):
    """A page of ``/orgs/<organization>/``: only for the organization's members."""

    nav = "installations"  # the top bar's section this page belongs to

    def dispatch(self, request, *args, **kwargs):
        if not request.user.is_authenticated:
            return self.handle_no_permission()
        self.organization = get_object_or_404(
            selectors.organizations_of(request.user), subdomain=kwargs.pop("organization")
        )
        return super().dispatch(request, *args, **kwargs)

    def page(self, template: str, context: dict, *, status: int = 200) -> HttpResponse:
        context = {"organization": self.organization, "nav": self.nav, **context}
        return super().page(template, context, status=status)


class HomeView(MemberView):
    def get(self, request):
        organization = selectors.organizations_of(request.user).first()
        if organization is None and request.user.is_staff:
            # An operator manages organizations in the admin: here, an overview of them all.
            overview = selectors.organizations_overview()
            return self.page("marketplace/operator_home.html", {"organizations": overview})
        if organization is None:
            return self.page("marketplace/no_organization.html", {})
        return redirect("marketplace:catalogue", organization.subdomain)
