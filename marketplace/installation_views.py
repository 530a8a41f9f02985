"""The marketplace's installation pages: the organization's installations, one
installation's page (status, configuration, space selection, connected properties, scopes,
deliveries, the webhook panel) and what its forms post (pause, resume, approve, connect,
uninstall, ping, rotate the signing secret, redeliver).

Every member of the organization reads these pages; each form is shown only to those whose
role lets them submit it (the roles' table, ``integrations.policies.may_act``), and a POST
from anyone else is refused with 403 naming who may, before anything is written."""

from django.contrib import messages
from django.core.exceptions import ValidationError
from django.http import Http404
from django.shortcuts import redirect

from docplatform.access import Action, refusal
from docplatform.events.models import Delivery
from integrations.configuration import button_properties, properties_of
from integrations.models import Installation
from integrations.policies import (
    act_check,
    configuration_definition,
    effective_status,
    installation_scopes,
    may_act,
    scopes_awaiting_approval,
)
from integrations.selectors import icon_ids, oauth_connections
from integrations.services.completion import installation_completions
from integrations.services.consent import installation_scopes_approve
from integrations.services.deliveries import installation_delivery_redeliver
from integrations.services.installations import (
    installation_configure,
    installation_pause,
    installation_recheck,
    installation_resume,
    installation_select_spaces,
    installation_uninstall,
)
from integrations.services.oauth import oauth_connect_start, oauth_disconnect
from webhooks.selectors import is_webhook_installation, signing_secrets_in_overlap
from webhooks.services.ping import webhook_ping_send
from webhooks.services.signing_secrets import webhook_secret_read, webhook_secret_rotate
from webhooks.transport.signatures import signature_scheme

from . import selectors
from .components import block_panel, configuration_screen
from .forms import ConfigurationForm, SpaceSelectionForm
from .views import OrganizationView


class InstallationListView(OrganizationView):
    def get(self, request):
        installations = selectors.installations_listed(request.user, self.organization)
        icons = icon_ids({i.integration for i in installations})
        rows = [
            {
                "installation": installation,
                "icon_id": icons.get(installation.integration_id),
                "awaiting": scopes_awaiting_approval(installation),
            }
            for installation in installations
        ]
        return self.page("marketplace/installations.html", {"rows": rows})


#: What the installation page's forms and links do, by the name the template knows them by.
PAGE_ACTIONS = {
    "configure": Action.CONFIGURE,
    "pause": Action.PAUSE,
    "uninstall": Action.UNINSTALL,
    "approve": Action.APPROVE_SCOPES,
    "read_logs": Action.READ_LOGS,
    "redeliver": Action.REDELIVER,
    "replay": Action.REPLAY,
    "ping": Action.PING,
    "send_test_events": Action.SEND_TEST_EVENTS,
    "rotate_secret": Action.ROTATE_SECRET,
}


class InstallationPageMixin:
    """The installation the URL names, within the organization, and its page."""

    def installation(self, installation_id, action: Action | None = None) -> Installation:
        """The installation (404 outside the organization); with ``action``, only for
        those who may do it (403 naming who may)."""
        installation = selectors.installation_for(
            self.request.user, self.organization, installation_id
        )
        if installation is None:
            raise Http404("No such installation.")
        if action is not None:
            act_check(self.request.user, action, installation)
        return installation

    def allowed(self, installation) -> dict[str, bool]:
        """What the signed-in person may do here: the forms and links the page shows."""
        user = self.request.user
        return {name: may_act(user, action, installation) for name, action in PAGE_ACTIONS.items()}

    def back_to(self, installation):
        return redirect("marketplace:installation", self.organization.subdomain, installation.pk)

    @staticmethod
    def definition(installation) -> dict:
        return configuration_definition(installation)

    def configuration_form(self, installation, data=None) -> ConfigurationForm:
        return ConfigurationForm(
            data,
            definition=self.definition(installation),
            configuration=installation.configuration,
            completions=installation_completions(installation=installation),
        )

    def spaces_form(self, installation, data=None) -> SpaceSelectionForm:
        return SpaceSelectionForm(
            data,
            spaces=selectors.organization_spaces(self.organization),
            initial={
                "space_selection": installation.space_selection,
                "spaces": list(installation.selected_spaces.all()),
            },
        )

    def installation_page(self, installation, *, form=None, spaces_form=None, status=200):
        definition = self.definition(installation)
        can = self.allowed(installation)
        form = form if form is not None else self.configuration_form(installation)
        status_lines = form.status_lines(effective_status(installation).reasons)
        # What keeps the installation pending, beside the fields it is about (a form that was
        # just refused shows its own errors instead).
        problems: dict[str, list[str]] = {}
        for line in status_lines if not form.is_bound else []:
            if line["field"]:
                problems.setdefault(line["field"], []).append(line["text"])
        properties = properties_of(definition)
        credentials = installation.credentials or {}
        connections = oauth_connections(installation)
        if installation.level != Installation.Level.ORGANIZATION:
            spaces_form = None  # only an organization installation chooses its spaces
        elif spaces_form is None:
            spaces_form = self.spaces_form(installation)
        if not can["configure"]:  # shown as they are, without their Save buttons
            for shown in (form, spaces_form):
                for field in shown.fields.values() if shown is not None else ():
                    field.disabled = True
        return self.page(
            "marketplace/installation.html",
            {
                "installation": installation,
                "integration": installation.integration,
                "icon_id": icon_ids([installation.integration]).get(installation.integration_id),
                "form": form,
                "config_fields": [(field, problems.get(field.name, [])) for field in form],
                "status_reasons": status_lines,
                "can": can,
                "configure_refusal": refusal(Action.CONFIGURE),
                "configuration_screen": (
                    configuration_screen(installation, definition) if can["configure"] else None
                ),
                "block_panel": block_panel(installation),
                "connections": [
                    {
                        "name": name,
                        "property": properties[name],
                        "connected": name in credentials,
                        "state": connections.get(name),
                    }
                    for name in sorted(button_properties(definition))
                ],
                "spaces_form": spaces_form,
                "children": installation.children.select_related("space", "site"),
                "deliveries": (
                    selectors.recent_deliveries(installation) if can["read_logs"] else None
                ),
                "open_statuses": Delivery.OPEN_STATUSES,
                "webhook": self.webhook_panel(installation, can),
                "permissions": self.permissions_panel(installation, can),
                # An integration made private or unlisted since keeps working, unlisted.
                "integration_listed": selectors.integration_for(
                    self.request.user, self.organization, installation.integration.name
                )
                is not None,
            },
            status=status,
        )

    @staticmethod
    def permissions_panel(installation, can: dict) -> dict:
        """The scopes the installation acts with, and the new ones awaiting an admin."""
        return {
            "scopes": installation_scopes(installation),
            "awaiting": scopes_awaiting_approval(installation),
            "can_approve": can["approve"],
        }

    def webhook_panel(self, installation, can: dict) -> dict | None:
        """What the page shows of a webhook installation: its secret only to admins."""
        if not is_webhook_installation(installation):
            return None
        secret = None
        if can["rotate_secret"]:
            secret = webhook_secret_read(user=self.request.user, installation=installation)
        return {
            "secret": secret,
            "signature": signature_scheme(installation.configuration),
            "previous_secrets": signing_secrets_in_overlap(installation),
        }


class InstallationView(InstallationPageMixin, OrganizationView):
    """An installation: status, configuration form, space selection, deliveries."""

    def recheck(self, installation) -> None:
        """A save that changes nothing checks a pending installation again (what its values
        depend on may have changed: the operator's allowed networks, say)."""
        if effective_status(installation).status != "pending":
            messages.info(self.request, "Nothing changed.")
            return
        installation = installation_recheck(user=self.request.user, installation=installation)
        shown = effective_status(installation)
        if shown.status == "pending":
            to_fix = len(shown.reasons)
            things = "thing" if to_fix == 1 else "things"
            messages.warning(
                self.request, f"Checked again, not active yet: {to_fix} {things} to fix (below)."
            )
        else:
            messages.success(self.request, f"Checked again: {shown.status} now.")

    def get(self, request, installation_id):
        return self.installation_page(self.installation(installation_id))

    def post(self, request, installation_id):
        installation = self.installation(installation_id, Action.CONFIGURE)
        form = self.configuration_form(installation, data=request.POST)
        if form.is_valid():
            changes = form.changes()
            if not changes:
                self.recheck(installation)
                return self.back_to(installation)
            try:
                installation = installation_configure(
                    user=request.user, installation=installation, changes=changes
                )
            except ValidationError as error:
                form.add_service_error(error)
            else:
                shown = effective_status(installation)
                to_fix = len(shown.reasons) if shown.status == "pending" else 0
                if to_fix:
                    things = "thing" if to_fix == 1 else "things"
                    messages.warning(
                        request, f"Saved, not active yet: {to_fix} {things} to fix (below)."
                    )
                else:
                    messages.success(request, f"Saved. The installation is {shown}.")
                return self.back_to(installation)
        return self.installation_page(installation, form=form, status=400)


class InstallationSpacesView(InstallationPageMixin, OrganizationView):
    """POST: which spaces an organization installation covers."""

    def post(self, request, installation_id):
        installation = self.installation(installation_id, Action.CONFIGURE)
        form = self.spaces_form(installation, data=request.POST)
        if form.is_valid():
            try:
                installation_select_spaces(
                    user=request.user,
                    installation=installation,
                    space_selection=form.cleaned_data["space_selection"],
                    spaces=form.cleaned_data["spaces"],
                )
            except ValidationError as error:
                form.add_error(None, error.messages)
            else:
                messages.success(request, "The space selection is saved.")
                return self.back_to(installation)
        return self.installation_page(installation, spaces_form=form, status=400)


class InstallationStatusView(InstallationPageMixin, OrganizationView):
    """POST: pause or resume an installation."""

    actions = {"pause": installation_pause, "resume": installation_resume}

    def post(self, request, installation_id, action):
        installation = self.installation(installation_id, Action.PAUSE)
        installation = self.actions[action](user=request.user, installation=installation)
        messages.success(request, f"The installation is {effective_status(installation)}.")
        return self.back_to(installation)


class InstallationScopesApproveView(InstallationPageMixin, OrganizationView):
    """POST (admins): grant the new scopes the page showed (``scope`` fields)."""

    def post(self, request, installation_id):
        installation = self.installation(installation_id, Action.APPROVE_SCOPES)
        try:
            installation = installation_scopes_approve(
                user=request.user,
                installation=installation,
                scopes=request.POST.getlist("scope") or None,
            )
        except ValidationError as error:
            messages.error(request, f"Not approved: {error.messages[0]}.")
        else:
            messages.success(request, "Approved: the new permissions apply now.")
        return self.back_to(installation)


class InstallationConnectView(InstallationPageMixin, OrganizationView):
    """POST (a Connect button, admins): a state issued to the signed-in admin, then on to the
    property's ``callback_url`` on the integrations origin, where the OAuth flow starts."""

    def post(self, request, installation_id):
        installation = self.installation(installation_id, Action.CONFIGURE)
        try:
            start = oauth_connect_start(
                user=request.user,
                installation=installation,
                property_name=request.POST.get("property", ""),
            )
        except ValidationError as error:
            messages.error(request, f"Not connected: {error.messages[0]}.")
            return self.back_to(installation)
        return redirect(start.url)


class InstallationDisconnectView(InstallationPageMixin, OrganizationView):
    """POST (admins): remove a connected property's credentials."""

    def post(self, request, installation_id):
        installation = self.installation(installation_id, Action.CONFIGURE)
        try:
            installation = oauth_disconnect(
                user=request.user,
                installation=installation,
                property_name=request.POST.get("property", ""),
            )
        except ValidationError as error:
            messages.error(request, f"Not disconnected: {error.messages[0]}.")
        else:
            shown = effective_status(installation)
            messages.success(request, f"Disconnected. The installation is {shown}.")
        return self.back_to(installation)


class InstallationUninstallView(InstallationPageMixin, OrganizationView):
    """Admins. GET asks for confirmation; POST uninstalls."""

    def get(self, request, installation_id):
        installation = self.installation(installation_id, Action.UNINSTALL)
        return self.page(
            "marketplace/uninstall.html",
            {
                "installation": installation,
                "children": installation.children.select_related("space", "site"),
            },
        )

    def post(self, request, installation_id):
        installation = self.installation(installation_id, Action.UNINSTALL)
        installation_uninstall(user=request.user, installation=installation)
        messages.success(request, f"{installation.integration.title} is uninstalled.")
        return redirect("marketplace:installations", self.organization.subdomain)


class WebhookPingView(InstallationPageMixin, OrganizationView):
    """POST (admins): send a test ping to a webhook installation's URL."""

    def post(self, request, installation_id):
        installation = self.installation(installation_id, Action.PING)
        try:
            ping = webhook_ping_send(user=request.user, installation=installation)
        except ValidationError as error:
            messages.error(request, f"No ping was sent: {error.messages[0]}.")
        else:
            messages.success(request, f"Test ping sent (eventId {ping.event_uuid}).")
        return self.back_to(installation)


class WebhookSecretRotateView(InstallationPageMixin, OrganizationView):
    """Admins only. GET asks for confirmation; POST makes a new signing secret."""

    def webhook_installation(self, installation_id) -> Installation:
        installation = self.installation(installation_id, Action.ROTATE_SECRET)
        if not is_webhook_installation(installation):
            raise Http404("Not a webhook installation.")
        return installation

    def get(self, request, installation_id):
        installation = self.webhook_installation(installation_id)
        return self.page("marketplace/rotate_secret.html", {"installation": installation})

    def post(self, request, installation_id):
        installation = self.webhook_installation(installation_id)
        webhook_secret_rotate(user=request.user, installation=installation)
        messages.success(
            request, "A new signing secret is made. The previous one also signs for 24 hours."
        )
        return self.back_to(installation)


class DeliveryRedeliverView(InstallationPageMixin, OrganizationView):
    """POST (admins): send a finished delivery of the installation again (same eventId)."""

    def post(self, request, installation_id, delivery_id):
        installation = self.installation(installation_id, Action.REDELIVER)
        delivery = selectors.installation_delivery(installation, delivery_id)
        if delivery is None:
            raise Http404("No such delivery.")
        try:
            installation_delivery_redeliver(user=request.user, delivery=delivery)
        except ValidationError as error:
            messages.error(request, f"Not redelivered: {error.messages[0]}.")
        else:
            messages.success(request, f"Delivery {delivery.pk} is on its way again.")
        return self.back_to(installation)
