"""The pages of one space (``/s/<space id>/...``) build on ``SpaceView``: the space as the
person may read it (404 otherwise), their role, the space's tabs, 403 naming who may for an
action their role does not allow. The space's settings page is here too: its title,
visibility and comments, and the sections the features register
(``hooks.on_space_settings``: Git sync's connection, the sites' feedback).
"""

from csp.decorators import csp_update
from django.contrib import messages
from django.contrib.auth.views import redirect_to_login
from django.core.exceptions import ValidationError
from django.http import Http404, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils.decorators import method_decorator
from django.views import View

from .. import hooks
from ..access import DIRECT_SAVE_REFUSAL, may_save_directly
from ..models import Space
from ..reading.blocks import BlockPlace
from ..search_index import search_languages
from . import access, selectors
from . import services as space_services

#: A space's pages show the images their authors link, from any https address.
SPACE_PAGES_CSP = {"img-src": ["'self'", "https:"]}


@method_decorator(csp_update(SPACE_PAGES_CSP), name="dispatch")
class SpaceView(View):
    """A page of one space (``/s/<space id>/...``): 404 for anyone who may not read it."""

    tab = "read"  # the space's tab this page belongs to

    def dispatch(self, request, *args, **kwargs):
        self.space, self.role = selectors.space_for_reader(request.user, kwargs.pop("space_id"))
        try:
            return super().dispatch(request, *args, **kwargs)
        except PermissionDeniedPage as refusal:
            if not request.user.is_authenticated:
                return redirect_to_login(request.get_full_path(), reverse("marketplace:login"))
            return self.page("docs/forbidden.html", {"reason": str(refusal)}, status=403)

    @property
    def may_edit(self) -> bool:
        return access.may_edit(self.role)

    def page(self, template: str, context: dict, *, status: int = 200) -> HttpResponse:
        context = {
            "space": self.space,
            "organization": self.space.organization if self.role else None,
            "role": self.role,
            "may_edit": self.may_edit,
            "may_administer": access.may_administer(self.role),
            "nav": "spaces",
            "tab": self.tab,
            **context,
        }
        return render(self.request, template, context, status=status)

    def require_member(self) -> None:
        """The history is the organization's: readers of a public space read its current
        pages, never what was removed from them (a 404, as for an unknown address)."""
        if self.role is None:
            raise Http404("No such page.")

    def require_editor(self) -> None:
        if not self.may_edit:
            raise PermissionDeniedPage(access.edit_refusal(self.role))

    @property
    def may_save_directly(self) -> bool:
        return may_save_directly(self.request.user, self.space)

    def require_direct_save(self) -> None:
        """An editor who may write the space's pages without a change request."""
        self.require_editor()
        if not self.may_save_directly:
            raise PermissionDeniedPage(DIRECT_SAVE_REFUSAL)

    def block_place(self, page_path: str, *, interactive: bool) -> BlockPlace:
        return BlockPlace(
            space=self.space,
            page_path=page_path,
            request=self.request,
            interactive=interactive and self.role is not None,
            action_url=reverse("docs:block-action", args=[self.space.pk]),
        )


class PermissionDeniedPage(Exception):
    """Raised by a space page that the person may read but not change."""


class SpaceAdminView(SpaceView):
    """A page of the space's settings: for the organization's admins."""

    tab = "settings"

    def require_admin(self):
        if self.role is None:
            raise Http404("No such space.")
        if not selectors.access.may_administer(self.role):
            raise PermissionDeniedPage(
                "Only the organization's admins may change a space's settings."
            )


class SpaceSettingsView(SpaceAdminView):
    """The space's title, visibility and whether readers may comment (and the way to delete
    it)."""

    def get(self, request):
        self.require_admin()
        space = self.space
        return self._form(space.title, space.visibility, space.readers_may_comment, {})

    def post(self, request):
        self.require_admin()
        title = request.POST.get("title", "")
        visibility = request.POST.get("visibility", "")
        readers_may_comment = request.POST.get("readers_may_comment") == "1"
        search_language = request.POST.get("search_language")  # absent: not offered (SQLite)
        try:
            space_services.space_update(
                space=self.space,
                actor=request.user,
                title=title,
                visibility=visibility,
                readers_may_comment=readers_may_comment,
                search_language=search_language,
            )
        except ValidationError as error:
            errors = error.message_dict
            return self._form(
                title, visibility, readers_may_comment, errors, status=400, language=search_language
            )
        messages.success(request, "Settings saved.")
        return redirect(reverse("docs:settings", args=[self.space.pk]))

    def _form(self, title, visibility, readers_may_comment, errors, status=200, language=None):
        """The form with the values given (``language``: the space's search language when
        None)."""
        return self.page(
            "docs/settings.html",
            {
                "title_value": title,
                "visibility_value": visibility,
                "readers_may_comment_value": readers_may_comment,
                "search_language_value": language or self.space.search_language,
                "search_languages": search_languages(),
                "visibilities": Space.Visibility.choices,
                "errors": errors,
                **hooks.space_settings_context(self.space),
            },
            status=status,
        )


class SpaceDeleteView(SpaceAdminView):
    """Deleting the space, after a confirmation that names it and has the admin type its
    title: its pages, revisions and installations go with it."""

    def get(self, request):
        self.require_admin()
        return self.page("docs/space_delete.html", {"errors": {}})

    def post(self, request):
        self.require_admin()
        if request.POST.get("confirm", "").strip() != self.space.title:
            errors = {"confirm": [f"type the space's title, {self.space.title}, to delete it"]}
            return self.page("docs/space_delete.html", {"errors": errors}, status=400)
        title = self.space.title
        space_services.space_delete(space=self.space, actor=request.user)
        messages.success(request, f"The space {title} is deleted.")
        return redirect("docs:spaces")
