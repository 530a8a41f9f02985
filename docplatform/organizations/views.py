"""The host's pages for starting and setting up an organization: New organization
(``/orgs/new/``), its settings (``/orgs/<subdomain>/settings/``) and a new space in it
(``/orgs/<subdomain>/spaces/new/``). Thin: the services write and validate, the access module
decides who may; a refused form is shown again with its errors (400)."""

from django.contrib import messages
from django.core.exceptions import PermissionDenied, ValidationError
from django.shortcuts import redirect
from django.urls import reverse

from .. import access
from ..access import Action
from ..models import Space
from ..pages import OrganizationPage, PersonPage
from ..spaces import services as space_services
from . import services


class OrganizationNewPage(PersonPage):
    """Start an organization: the person becomes its admin, then creates its spaces."""

    nav = "organization-new"

    def dispatch(self, request, *args, **kwargs):
        if request.user.is_authenticated and not access.may_create_organization(request.user):
            raise PermissionDenied(access.ORGANIZATION_CREATION_REFUSAL)
        return super().dispatch(request, *args, **kwargs)

    def get(self, request):
        return self.form({"title": "", "subdomain": ""}, {})

    def post(self, request):
        values = {field: request.POST.get(field, "") for field in ("title", "subdomain")}
        try:
            organization = services.organization_create(**values, admin=request.user)
        except ValidationError as error:
            return self.form(values, error.message_dict, status=400)
        messages.success(
            request, f"{organization.title} is created and you are its admin: add its spaces."
        )
        return redirect("docs:spaces")

    def form(self, values: dict, errors: dict, *, status: int = 200):
        context = {"values": values, "errors": errors, "reserved": services.RESERVED_SUBDOMAINS}
        return self.page("orgs/new.html", context, status=status)


class OrganizationSettingsPage(OrganizationPage):
    """The organization's title, and whether its members may install integrations whose
    scopes write nothing: for its admins."""

    action = Action.MANAGE_ORGANIZATION
    nav = "organization-settings"

    def get(self, request):
        values = {
            "title": self.organization.title,
            "members_may_install": self.organization.members_may_install,
        }
        return self.form(values, {})

    def post(self, request):
        values = {
            "title": request.POST.get("title", ""),
            "members_may_install": request.POST.get("members_may_install") == "on",
        }
        try:
            services.organization_update(
                organization=self.organization, actor=request.user, **values
            )
        except ValidationError as error:
            return self.form(values, error.message_dict, status=400)
        messages.success(request, "Settings saved.")
        return redirect("orgs:settings", self.organization.subdomain)

    def form(self, values: dict, errors: dict, *, status: int = 200):
        return self.page("orgs/settings.html", {"values": values, "errors": errors}, status=status)


class SpaceNewPage(OrganizationPage):
    """A new, empty space of the organization: for its admins and members."""

    action = Action.CREATE_SPACE
    nav = "spaces"

    def get(self, request):
        return self.form({"title": "", "visibility": Space.Visibility.PRIVATE}, {})

    def post(self, request):
        values = {field: request.POST.get(field, "") for field in ("title", "visibility")}
        try:
            space = space_services.space_create(
                organization=self.organization, actor=request.user, **values
            )
        except ValidationError as error:
            return self.form(values, error.message_dict, status=400)
        messages.success(request, f"{space.title} is created: write its first page.")
        return redirect(reverse("docs:page-new", args=[space.pk]))

    def form(self, values: dict, errors: dict, *, status: int = 200):
        context = {"values": values, "errors": errors, "visibilities": Space.Visibility.choices}
        return self.page("orgs/space_new.html", context, status=status)
