"""The reader: the spaces a member reaches, a space's pages with their navigation, and the
blocks' buttons. Thin: selectors read, services write."""

import dataclasses

from csp.decorators import csp_update
from django.contrib.auth.mixins import LoginRequiredMixin
from django.contrib.auth.views import redirect_to_login
from django.core.cache import cache
from django.http import Http404, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse, reverse_lazy
from django.utils.decorators import method_decorator
from django.views import View

from ..api_visitors import VISITOR_COOKIE, remember_visitor, visitor_from
from . import access, selectors, services
from .blocks import BlockPlace, provider
from .reading import page_document, shown_html, table_of_contents

#: Pages may show images from anywhere on the web (a documentation page links its own).
READER_CSP = {"img-src": ["'self'", "https:"]}


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

    def require_editor(self) -> None:
        if not self.may_edit:
            raise PermissionDeniedPage(access.edit_refusal(self.role))

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


class SpaceListView(LoginRequiredMixin, View):
    """``/s/``: every space of the user's organizations (the top bar's "Spaces")."""

    login_url = reverse_lazy("marketplace:login")

    def get(self, request):
        spaces = access.member_spaces(request.user).order_by("organization__title", "title")
        groups: dict = {}
        for space in spaces:
            groups.setdefault(space.organization, []).append(space)
        return render(request, "docs/spaces.html", {"groups": groups, "nav": "spaces"})


@method_decorator(csp_update(READER_CSP), name="dispatch")
class ReaderView(SpaceView):
    """A page of the space (its first page without a path); opening it fires ``space_view``
    for the visitor, at most once per visitor, space and 5 minutes."""

    def get(self, request, page_path=None):
        revision_id = self.space.current_revision_id
        page = selectors.page_in(revision_id, page_path)
        if page is None and page_path is not None:
            raise Http404("No such page.")
        roots, ordered = selectors.navigation(revision_id)
        context = {
            "roots": roots,
            "current_path": page.path if page else None,
            "nav_prefix": reverse("docs:space", args=[self.space.pk]),
        }
        if page is not None:
            document = page_document(page)
            paths = [item.path for item in ordered]
            at = paths.index(page.path)
            context |= {
                "page_obj": page,
                "content": shown_html(document, self.block_place(page.path, interactive=True)),
                "toc": table_of_contents(document),
                "previous": ordered[at - 1] if at > 0 else None,
                "next": ordered[at + 1] if at + 1 < len(ordered) else None,
            }
        response = self.page("docs/reader.html", context)
        self._record_view(response)
        return response

    def _record_view(self, response) -> None:
        visitor = visitor_from(self.request)
        user = self.request.user
        if user.is_authenticated:
            visitor = dataclasses.replace(visitor, user_id=str(user.pk))
        known = self.request.COOKIES.get(VISITOR_COOKIE) == visitor.anonymous_id
        who = services.reader_identity(visitor, known_cookie=known)
        seen = f"space-view-seen:{self.space.pk}:{who}"
        # The cache spares a database round trip on every read; the row decides.
        if not cache.get(seen):
            services.space_view_from_reader(space=self.space, visitor=visitor, who=who)
            cache.set(seen, True, services.READER_VIEW_INTERVAL.total_seconds())
        remember_visitor(response, self.request, visitor)


class BlockActionView(SpaceView):
    """POST: press a block's button (or change its inputs) on a page of the current revision.
    The block is found in the page by its key, so its integration and props are the page's,
    never the form's. Answers the block's HTML to a script, else goes back to the page."""

    def post(self, request):
        if self.role is None:
            raise Http404("No such block.")
        path, key = request.POST.get("page", ""), request.POST.get("key", "")
        page = selectors.page_in(self.space.current_revision_id, path) if path else None
        ref = None
        if page is not None:
            document = page_document(page)
            ref = next((b for b in document.blocks if b.key == key and not b.error), None)
        if ref is None:
            raise Http404("No such block on this page (it may have been removed meanwhile).")
        html = provider().act(ref, self.block_place(page.path, interactive=True), request.POST)
        if request.headers.get("X-Requested-With") == "fetch":
            return HttpResponse(html)
        return redirect(reverse("docs:page", args=[self.space.pk, page.path]) + f"#block-{key}")
