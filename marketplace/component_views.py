"""The marketplace's component pages: press a component's buttons, submit its inputs, insert
and remove block previews. Each POST acts, then goes back to the installation page. A
configuration screen's actions configure the installation (its organization's admins, 403
for others); a block's, as in a page, are any member's (``policies.component_action``)."""

import secrets

from django.contrib import messages
from django.http import Http404
from django.shortcuts import redirect
from django.urls import reverse

from integrations.component_forms import ComponentActionForm, ComponentInstanceForm
from integrations.gateway.failures import RuntimeFailure
from integrations.policies import act_check, component_action
from integrations.selectors import block_ids
from integrations.services.components import (
    component_render,
    component_state_delete,
)

from .installation_views import InstallationPageMixin
from .views import OrganizationView


class ComponentPageMixin(InstallationPageMixin):
    def back_to_component(self, installation, instance: str):
        page = reverse(
            "marketplace:installation", args=[self.organization.subdomain, installation.pk]
        )
        return redirect(f"{page}#component-{instance}")


class ComponentActionView(ComponentPageMixin, OrganizationView):
    """POST: dispatch the changed inputs' onChange actions, then the pressed button's onPress,
    to one component instance; the first failure stops and is shown."""

    def post(self, request, installation_id, component_id):
        installation = self.installation(installation_id)
        acting = component_action(installation.integration, component_id)
        act_check(request.user, acting, installation)
        form = ComponentActionForm(request.POST)
        if not form.is_valid():
            messages.error(request, " ".join(form.errors.get("__all__", [form.MALFORMED])))
            return self.back_to(installation)
        instance = form.cleaned_data["instance"]
        for action in form.cleaned_data["actions"]:
            try:
                component_render(
                    installation=installation,
                    component_id=component_id,
                    instance=instance,
                    action=action,
                )
            except RuntimeFailure as error:
                messages.error(request, f"The {action['action']!r} action failed: {error.message}.")
                break
        return self.back_to_component(installation, instance)


class BlockInsertView(ComponentPageMixin, OrganizationView):
    """POST: insert a preview of a quick insert block: a new instance with its own state."""

    def post(self, request, installation_id, component_id):
        installation = self.installation(installation_id)
        if component_id not in block_ids(installation.integration):
            raise Http404("No such block.")
        instance = f"preview-{secrets.token_hex(6)}"
        try:
            component_render(
                installation=installation, component_id=component_id, instance=instance
            )
        except RuntimeFailure as error:
            messages.error(request, f"The block could not be inserted: {error.message}.")
            return self.back_to(installation)
        return self.back_to_component(installation, instance)


class BlockRemoveView(ComponentPageMixin, OrganizationView):
    """POST: remove a block preview (and its state)."""

    def post(self, request, installation_id, component_id):
        installation = self.installation(installation_id)
        form = ComponentInstanceForm(request.POST)
        if form.is_valid():
            component_state_delete(
                installation=installation,
                component_id=component_id,
                instance=form.cleaned_data["instance"],
            )
        return self.back_to(installation)
