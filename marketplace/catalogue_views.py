"""The marketplace's catalogue pages: browse the integrations an organization may install,
an integration's page (opened directly, or through an unlisted integration's install link;
installing is ``install_views``) and its images."""

from django.contrib import messages
from django.contrib.auth.mixins import LoginRequiredMixin
from django.core.exceptions import ValidationError
from django.http import Http404, HttpResponse
from django.shortcuts import redirect
from django.urls import reverse_lazy
from django.utils.http import urlencode
from django.views import View

from docplatform.access import install_refusal
from integrations.models import Installation
from integrations.policies import (
    integration_writes,
    may_install,
    offered_scopes,
    offered_version,
)
from integrations.selectors import icon_ids
from integrations.services import integration_release

from . import selectors
from .forms import CatalogueFilterForm, InstallForm, InstallLinkForm
from .views import OrganizationView


class CatalogueView(OrganizationView):
    nav = "catalogue"

    def get(self, request):
        form = CatalogueFilterForm(request.GET)
        integrations = list(
            selectors.catalogue_for(request.user, self.organization, **form.filters())
        )
        icons = icon_ids(integrations)
        statuses = selectors.organization_installation_statuses(
            self.organization, [integration.pk for integration in integrations]
        )
        cards = [
            {
                "integration": integration,
                "icon_id": icons.get(integration.pk),
                "status": statuses.get(integration.pk),
            }
            for integration in integrations
        ]
        return self.page("marketplace/catalogue.html", {"form": form, "cards": cards})


class IntegrationView(OrganizationView):
    """An integration's page, with its install buttons (they lead to ``InstallView``)."""

    nav = "catalogue"

    install_token = ""

    def get(self, request, name):
        integration = self.integration(name)
        return self.integration_page(integration, InstallForm(**self.places(integration)))

    def integration(self, name):
        integration = selectors.integration_for(
            self.request.user, self.organization, name, install_token=self.install_token
        )
        if integration is None:
            raise Http404("No such integration.")
        return integration

    def places(self, integration) -> dict:
        return {
            "spaces": selectors.spaces_without(integration, self.organization),
            "sites": selectors.sites_without(integration, self.organization),
        }

    def integration_page(self, integration, form, *, status=200) -> HttpResponse:
        installations = list(selectors.integration_installations(integration, self.organization))
        return self.page(
            "marketplace/integration.html",
            {
                "integration": integration,
                "assets": selectors.integration_assets(integration),
                "levels": selectors.install_levels(integration),
                "installations": installations,
                "organization_installation": next(
                    (i for i in installations if i.level == Installation.Level.ORGANIZATION),
                    None,
                ),
                "form": form,
                "may_install": may_install(
                    self.request.user, integration, self.organization, self.install_token or None
                ),
                "install_refusal": install_refusal(
                    self.organization, writes=integration_writes(integration)
                ),
                "install_token": self.install_token,
                "versions": selectors.versions_for_owner(self.request.user, integration),
                "scopes": offered_scopes(integration, self.organization.pk),
                "offered_version": offered_version(integration, self.organization.pk),
                **selectors.owners_listing(self.request.user, integration),
            },
            status=status,
        )


class VersionReleaseView(IntegrationView):
    """POST "Make current": release an older version again (``integration_release``: the
    integration's organization's admins only, 403 for others)."""

    def get(self, request, name, number):
        return redirect("marketplace:integration", self.organization.subdomain, name)

    def post(self, request, name, number):
        integration = self.integration(name)
        try:
            result = integration_release(user=request.user, integration=integration, number=number)
        except ValidationError as error:
            messages.error(request, " ".join(error.messages))
        else:
            messages.success(request, release_message(result))
        return redirect("marketplace:integration", self.organization.subdomain, name)


def release_message(result) -> str:
    """What "Make current" says it did."""
    number = result.version.number
    if not result.released:
        return f"Version {number} is current already."
    changed = len(result.changed)
    checked = f" {changed} installation(s) changed when checked against it." if changed else ""
    return f"Version {number} is current again: every installation runs it.{checked}"


class InstallLinkView(IntegrationView):
    """``/install/<name>/?token=...``: the shared install link of an unlisted integration.

    It acts for ``?org=<subdomain>``, or the user's first organization.
    """

    def dispatch(self, request, *args, **kwargs):
        if not request.user.is_authenticated:
            return self.handle_no_permission()
        query = InstallLinkForm(request.GET).parsed()
        self.install_token = query["token"]
        organizations = selectors.organizations_of(request.user)
        organization = (
            organizations.filter(subdomain=query["org"]).first() if query["org"] else None
        )
        organization = organization or organizations.first()
        if organization is None:
            return self.page("marketplace/no_organization.html", {}, status=404)
        kwargs["organization"] = organization.subdomain
        return super().dispatch(request, *args, **kwargs)

    def switch_url(self, organization) -> str:
        query = urlencode({"token": self.install_token, "org": organization.subdomain})
        return f"{self.request.path}?{query}"


class AssetView(LoginRequiredMixin, View):
    """An integration's icon or preview image, for those who may see the integration."""

    login_url = reverse_lazy("marketplace:login")

    def get(self, request, asset_id):
        install_token = InstallLinkForm(request.GET).parsed()["token"]
        asset = selectors.asset_visible_to(request.user, asset_id, install_token=install_token)
        if asset is None:
            raise Http404("No such image.")
        response = HttpResponse(bytes(asset.content), content_type=asset.content_type)
        response["X-Content-Type-Options"] = "nosniff"
        response["Content-Security-Policy"] = "default-src 'none'; sandbox"
        response["Cache-Control"] = "private, max-age=3600"
        return response
