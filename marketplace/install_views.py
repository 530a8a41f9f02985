"""Installing from the marketplace, with the installer's consent: the integration page's
install buttons open a page saying what the integration may do there (its scopes in words,
the hosts its code may call) and where it goes; only its **Install** button (POST with
``confirm``) installs. A POST without ``confirm`` installs nothing and says so. The REST API
installs at once: calling it is the caller's consent. Both pages are for those who may
install it (``policies.install_check``: admins; members too for an integration that writes
nothing when the organization lets them): anyone else gets 403 naming who may."""

from django.contrib import messages
from django.core.exceptions import ValidationError
from django.http import HttpResponse
from django.shortcuts import redirect
from django.urls import reverse
from django.utils.http import urlencode

from integrations.policies import install_check, offered_scopes, offered_version
from integrations.services.installations import installation_create

from .catalogue_views import IntegrationView
from .forms import InstallForm, InstallLinkForm


class InstallView(IntegrationView):
    """``integrations/<name>/install/?level=...&space=...&site=...`` (and ``token=`` for an
    unlisted integration's install link): GET asks for consent, POST with ``confirm``
    installs."""

    def dispatch(self, request, *args, **kwargs):
        self.install_token = InstallLinkForm(request.GET).parsed()["token"]
        return super().dispatch(request, *args, **kwargs)

    def get(self, request, name):
        integration = self.integration(name)
        install_check(request.user, integration, self.organization, self.install_token or None)
        form = InstallForm(request.GET, **self.places(integration))
        if not form.is_valid():
            return self.integration_page(integration, form, status=400)
        return self.consent_page(integration, form)

    def post(self, request, name):
        integration = self.integration(name)
        install_check(request.user, integration, self.organization, self.install_token or None)
        form = InstallForm(request.POST, **self.places(integration))
        if not form.is_valid():
            return self.integration_page(integration, form, status=400)
        if not form.cleaned_data["confirm"]:
            return self.consent_page(integration, form, unconfirmed=True)
        try:
            installation = installation_create(
                user=request.user,
                integration=integration,
                organization=self.organization,
                space=form.cleaned_data["space"],
                site=form.cleaned_data["site"],
                install_token=self.install_token or None,
            )
        except ValidationError as error:
            form.add_error(None, error.messages)
            return self.integration_page(integration, form, status=400)
        messages.success(request, f"{integration.title} is installed.")
        return redirect("marketplace:installation", self.organization.subdomain, installation.pk)

    def consent_page(self, integration, form, *, unconfirmed=False) -> HttpResponse:
        """What the integration may do and where it goes, with the Install button; 400 when
        it answers a POST that did not confirm."""
        return self.page(
            "marketplace/install_consent.html",
            {
                "integration": integration,
                "version": offered_version(integration, self.organization.pk),
                **scopes_where(
                    offered_scopes(integration, self.organization.pk), form.cleaned_data["level"]
                ),
                "level": form.cleaned_data["level"],
                "space": form.cleaned_data["space"],
                "site": form.cleaned_data["site"],
                "install_token": self.install_token,
                "back": self.integration_url(integration),
                "unconfirmed": unconfirmed,
            },
            status=400 if unconfirmed else 200,
        )

    def integration_url(self, integration) -> str:
        """The integration's page this install started from."""
        if self.install_token:
            query = urlencode({"token": self.install_token, "org": self.organization.subdomain})
            return f"{reverse('marketplace:install-link', args=[integration.name])}?{query}"
        return reverse(
            "marketplace:integration", args=[self.organization.subdomain, integration.name]
        )


#: The scopes that act on one kind of place only, by the prefix they start with.
PLACE_SCOPES = {"space": "space:", "site": "site:"}


def scopes_where(scopes, level: str) -> dict:
    """The consent page's two lists: ``scopes``, what the integration may do where it is
    installed now, and ``elsewhere``, what it asks for that applies only to another kind of
    place (a site's scopes when it goes into a space, and the other way round)."""
    other = {"space": PLACE_SCOPES["site"], "site": PLACE_SCOPES["space"]}.get(level)
    here = [scope for scope in scopes if other is None or not scope.startswith(other)]
    return {"scopes": here, "elsewhere": [scope for scope in scopes if scope not in here]}
