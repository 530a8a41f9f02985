"""An organization's Sites page on the platform's origin (``/orgs/<subdomain>/sites/``): every
member sees its sites, where they are served and what they publish; its admins create them,
choose and order their spaces, publish or unpublish them and delete them (after typing the
site's title) and set who may read them (anyone, or signed-in visitors). Thin:
``site_services`` validates and writes, the access module decides who may
(``Action.MANAGE_SITE``); a refused form is shown again with its errors (400)."""

from django.contrib import messages
from django.core.exceptions import ValidationError
from django.http import Http404
from django.shortcuts import redirect
from django.utils.functional import cached_property

from .. import access
from ..access import Action
from ..pages import OrganizationPage
from ..selectors import organization_spaces
from . import selectors, site_services
from .addresses import site_url
from .visitor_auth import visitor_auth

#: Where a space without a position given goes: after those with one.
UNPLACED = 10**9


class SitesPage(OrganizationPage):
    nav = "sites"

    def sites_page(self, template: str, context: dict, *, status: int = 200):
        may_manage = access.may(self.request.user, Action.MANAGE_SITE, self.organization)
        return self.page(template, {"may_manage": may_manage, **context}, status=status)


class SiteListPage(SitesPage):
    """The organization's sites: for all its people."""

    def get(self, request):
        sites = [(site, site_url(site)) for site in selectors.sites_of(self.organization)]
        return self.sites_page("orgs/sites.html", {"sites": sites})


class SiteFormPage(SitesPage):
    """A site's title and its spaces in their order: each space of the organization is a
    checkbox with a position (smaller first), so the order is set without a script."""

    action = Action.MANAGE_SITE
    site = None  # a new site

    def form(self, values: dict, errors: dict, *, status: int = 200):
        placed = values["spaces"]
        rows = [
            {
                "space": space,
                "checked": space.pk in placed,
                "position": placed.index(space.pk) + 1 if space.pk in placed else "",
            }
            for space in organization_spaces(self.organization).order_by("title", "pk")
        ]
        rows.sort(key=lambda row: (row["position"] or UNPLACED, row["space"].title))
        context = {"values": values, "errors": errors, "rows": rows, "site": self.site}
        return self.sites_page("orgs/site_form.html", context, status=status)

    def submitted(self, request) -> dict:
        """The form's title and the checked spaces, ordered by their positions."""
        positions = {}
        for index, space_id in enumerate(request.POST.getlist("spaces")):
            raw = request.POST.get(f"position-{space_id}", "").strip()
            positions[space_id] = (int(raw) if raw.isdigit() else UNPLACED, index)
        ordered = sorted(positions, key=positions.__getitem__)
        return {"title": request.POST.get("title", ""), "spaces": ordered}


class SiteNewPage(SiteFormPage):
    def get(self, request):
        return self.form({"title": "", "spaces": [], "published": False}, {})

    def post(self, request):
        values = {**self.submitted(request), "published": request.POST.get("published") == "on"}
        try:
            site = site_services.site_create(
                organization=self.organization,
                title=values["title"],
                space_ids=values["spaces"],
                published=values["published"],
                actor=request.user,
            )
        except ValidationError as error:
            return self.form(values, error.message_dict, status=400)
        shown = "published" if site.published else "created, not published yet"
        messages.success(request, f"{site.title} is {shown}.")
        return redirect("site-admin:list", self.organization.subdomain)


class SiteActionPage(SitesPage):
    """An admin's action on one of the organization's sites (404 for any other site)."""

    action = Action.MANAGE_SITE

    def dispatch(self, request, *args, **kwargs):
        self.site_id = kwargs.pop("site_id")
        return super().dispatch(request, *args, **kwargs)

    @cached_property
    def site(self):
        site = selectors.sites_of(self.organization).filter(pk=self.site_id).first()
        if site is None:
            raise Http404("No such site.")
        return site


class SiteEditPage(SiteActionPage, SiteFormPage):
    """Also who may read the site: anyone, or only visitors signed in through one of its
    installations granted ``site:visitor:auth`` (its visitor key is never shown)."""

    def form(self, values: dict, errors: dict, *, status: int = 200):
        values = {"sign_in_choices": visitor_auth().choices(self.site), **values}
        return super().form(values, errors, status=status)

    def get(self, request):
        site = self.site
        spaces = [placement.space_id for placement in site.placements.all()]
        values = {
            "title": site.title,
            "spaces": spaces,
            "audience": site.audience,
            "auth_installation": site.visitor_auth_installation,
        }
        return self.form(values, {})

    def post(self, request):
        site, values = self.site, self.submitted(request)
        values["audience"] = request.POST.get("audience", "public")
        values["auth_installation"] = request.POST.get("auth_installation", "")
        try:
            site_services.site_update(
                site=site,
                actor=request.user,
                title=values["title"],
                space_ids=values["spaces"],
                audience=values["audience"],
                auth_installation=values["auth_installation"],
            )
        except ValidationError as error:
            return self.form(values, error.message_dict, status=400)
        messages.success(request, f"{site.title} is saved.")
        return redirect("site-admin:list", self.organization.subdomain)


class SitePublishPage(SiteActionPage):
    """POST ``published`` (``on``, or anything else to unpublish)."""

    def post(self, request):
        site = self.site
        published = request.POST.get("published") == "on"
        site_services.site_update(site=site, actor=request.user, published=published)
        shown = "published" if published else "unpublished: its address answers 404 now"
        messages.success(request, f"{site.title} is {shown}.")
        return redirect("site-admin:list", self.organization.subdomain)


class SiteDeletePage(SiteActionPage):
    """A confirmation naming the site, which the admin types to delete it."""

    def get(self, request):
        return self.sites_page("orgs/site_delete.html", {"site": self.site, "errors": {}})

    def post(self, request):
        site = self.site
        if request.POST.get("confirm", "").strip() != site.title:
            errors = {"confirm": [f"type the site's title, {site.title}, to delete it"]}
            context = {"site": site, "errors": errors}
            return self.sites_page("orgs/site_delete.html", context, status=400)
        site_services.site_delete(site=site, actor=request.user)
        messages.success(request, f"{site.title} is deleted.")
        return redirect("site-admin:list", self.organization.subdomain)
