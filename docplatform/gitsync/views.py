"""The Git part of a space's settings page (``/s/<space id>/settings``): connect, disconnect,
"Sync now" and "Import", for the organization's admins (others: 404 or 403, as the page
itself). Each form posts here and comes back to the page; the syncs run in a task."""

from django.contrib import messages
from django.core.exceptions import ValidationError
from django.shortcuts import redirect
from django.urls import reverse

from ..spaces.views import SpaceSettingsView
from . import selectors, services
from .models import GitSync

#: The form's field for each of the service's error fields.
FORM_FIELDS = {
    "credentials": "password",
    "credentials.username": "username",
    "credentials.password": "password",
}


class GitSettingsView(SpaceSettingsView):
    """A POST of the settings page's Git part; answers with the page again."""

    http_method_names = ["post"]

    def back(self):
        return redirect(reverse("docs:settings", args=[self.space.pk]) + "#git")


class GitConnectView(GitSettingsView):
    """Save the connection: address, branch, "sync every new revision" and credentials (a
    password left empty keeps the saved one, unless the address changes)."""

    git_context: dict = {}  # the form sent back, when it has errors

    def post(self, request):
        self.require_admin()
        form = {
            "url": request.POST.get("url", ""),
            "branch": request.POST.get("branch", ""),
            "sync_on_revision": request.POST.get("sync_on_revision") == "on",
            "username": request.POST.get("username", ""),
        }
        password = request.POST.get("password", "")
        if request.POST.get("forget_credentials") == "on":
            credentials = {}
        elif password or form["username"]:
            credentials = {"username": form["username"], "password": password}
        else:
            credentials = None
        try:
            services.git_connection_set(
                space=self.space,
                url=form["url"],
                branch=form["branch"],
                sync_on_revision=form["sync_on_revision"],
                credentials=credentials,
                user=request.user,
            )
        except ValidationError as error:
            errors = {
                FORM_FIELDS.get(name, name): found for name, found in error.message_dict.items()
            }
            self.git_context = selectors.settings_context(self.space, form=form, errors=errors)
            return self._form(
                self.space.title,
                self.space.visibility,
                self.space.readers_may_comment,
                {},
                status=400,
            )
        messages.success(request, "Git connection saved.")
        return self.back()

    def page(self, template, context, *, status=200):
        """The settings page, with the connection form as it was sent and its errors."""
        return super().page(template, context | self.git_context, status=status)


class GitDisconnectView(GitSettingsView):
    def post(self, request):
        self.require_admin()
        if services.git_connection_remove(space=self.space):
            messages.success(request, "Disconnected from Git. The syncs' history stays below.")
        return self.back()


class GitSyncRequestView(GitSettingsView):
    """ "Sync now" (``export``) or "Import" (``import``)."""

    direction = GitSync.Direction.EXPORT

    def post(self, request):
        self.require_admin()
        try:
            sync = services.git_sync_request(
                space=self.space, direction=self.direction, requested_by=request.user
            )
        except services.NotConnected as refusal:
            messages.error(request, f"Nothing to sync: {refusal}.")
            return self.back()
        what = "Sync" if self.direction == GitSync.Direction.EXPORT else "Import"
        messages.success(request, f"{what} #{sync.pk} queued: it runs in a moment (see below).")
        return self.back()
