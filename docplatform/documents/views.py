"""The reader: the spaces a member reaches, a space's pages with their navigation, and the
blocks' buttons. Thin: selectors read, services write."""

import functools
import hashlib
import hmac

from django.conf import settings
from django.contrib import messages
from django.contrib.auth.mixins import LoginRequiredMixin
from django.core.cache import cache
from django.http import Http404, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse, reverse_lazy
from django.utils.safestring import mark_safe
from django.views import View

from ..access import (
    Action,
    may_create_organization,
    organizations_of,
    role_may,
    spaces_visible_to,
)
from ..client_address import client_ip
from ..reading import search
from ..reading.blocks import provider
from ..reading.showing import ShownPage, shown_page
from ..spaces.views import SpaceView
from ..visitors import remember_visitor, space_reader
from . import visits
from .comments.panel import comments_panel

#: Where a cached page shell takes its content: derived from the secret key, so the same in
#: every process sharing a cache, and unknown to anyone writing content.
_CONTENT = "<!--content-{}-->".format(
    hmac.new(settings.SECRET_KEY.encode(), b"reader-content-mark", hashlib.sha256).hexdigest()[:32]
)
#: Where a cached page shell of one of the organization's people takes its comments panel,
#: rendered at every read (comments change between two reads of one shell).
_COMMENTS = "<!--comments-{}-->".format(
    hmac.new(settings.SECRET_KEY.encode(), b"reader-comments-mark", hashlib.sha256).hexdigest()[:32]
)


class SpaceListView(LoginRequiredMixin, View):
    """``/s/``: every space of the user's organizations, by organization (the top bar's
    "Spaces"), with a New space button where their role lets them create one."""

    login_url = reverse_lazy("marketplace:login")

    def get(self, request):
        organizations = organizations_of(request.user).order_by("title", "subdomain")
        groups = {organization.pk: (organization, []) for organization in organizations}
        spaces = spaces_visible_to(request.user).order_by("title", "pk")
        for space in spaces:
            groups[space.organization_id][1].append(space)
        rows = [
            (organization, spaces, role_may(organization.role, Action.CREATE_SPACE))
            for organization, spaces in groups.values()
        ]
        context = {
            "groups": rows,
            "nav": "spaces",
            "may_create_organization": may_create_organization(request.user),
        }
        return render(request, "docs/spaces.html", context)


class SearchView(LoginRequiredMixin, View):
    """``/s/search?q=``: the top bar's search of every space the person may read (their
    organizations', ``reading.search.member_search``), each hit linking to the reader; a 429
    past the address's search rate (``SITE_RATES["search"]``)."""

    login_url = reverse_lazy("marketplace:login")

    def get(self, request):
        query = request.GET.get("q", "").strip()
        context = {"query": query, "search_query": query, "nav": "search"}
        if problem := search.query_problem(query):
            return render(request, "docs/search.html", {**context, "problem": problem}, status=400)
        if query and (refusal := search.rate_refusal(client_ip(request))):
            message, wait = refusal
            response = render(
                request, "docs/search.html", {**context, "refused": message}, status=429
            )
            response["Retry-After"] = str(wait)
            return response
        hits = search.member_search(request.user, query) if query else []
        return render(request, "docs/search.html", {**context, "hits": hits})


class ReaderView(SpaceView):
    """A page of the space (its first page without a path), shown by the one service of every
    shown page (``showing``); opening it fires ``space_view`` for the visitor, at most once per
    visitor, space and 5 minutes (``visits``).

    The organization's people see every page and adaptive section (each section marked with
    its condition); anyone else reading an open space sees it as a published site's visitor
    without claims does (README, "Adaptive content")."""

    @property
    def claims(self) -> dict | None:
        return None if self.role is not None else {}

    def get(self, request, page_path=None):
        shown = shown_page(
            self.space,
            page_path,
            claims=self.claims,
            prefix=reverse("docs:space", args=[self.space.pk]),
            place=lambda path: self.block_place(path, interactive=True),
        )
        if shown is None:
            raise Http404("No such page.")
        if shown.page is None:
            response = self.page("docs/reader.html", shown.frame())
        elif shown.static:  # the whole page is kept: no document to build at a read
            response = HttpResponse(self._with_comments(self._shell(shown, whole=True), shown))
        else:
            shell = self._shell(shown).replace(_CONTENT, shown.content(), 1)
            response = HttpResponse(self._with_comments(shell, shown))
        self._record_view(response)
        return response

    def _with_comments(self, shell: str, shown: ShownPage) -> str:
        """The page with its comments panel where the shell marks it (the organization's
        people only: the shell of anyone else has no mark)."""
        if self.role is None:
            return shell
        panel = comments_panel(self.request, space=self.space, page=shown.page)
        return shell.replace(_COMMENTS, panel, 1)

    def _frame(self, shown: ShownPage, *, whole: bool) -> dict:
        """The shown page's frame with the reader's own: the conditions marked and the
        comments' place for the organization's people; the content itself when ``whole``,
        else a mark in its place."""
        return shown.frame(shown.document.html if whole else _CONTENT) | {
            "show_condition": self.role is not None,
            "comments": mark_safe(_COMMENTS if self.role else ""),  # noqa: S308
        }

    def _shell(self, shown: ShownPage, *, whole: bool = False) -> str:
        """The rendered page with a mark where its content goes (or, ``whole``, with its
        content: a page without blocks is the same at every read). It is the same at every read
        of the page by the same person with the same role, as long as the space's title and
        visibility are (a revision is never changed): kept in the shared cache, so a read
        renders no template. Not kept when the page shows messages (after a save)."""
        request, user, page = self.request, self.request.user, shown.page
        person = (user.pk, user.get_username(), user.is_staff) if user.is_authenticated else None
        # A signed-in page holds CSRF tokens: the one its cookie's secret makes.
        secret = request.META.get("CSRF_COOKIE") if person else ""
        if len(messages.get_messages(request)) or secret is None:
            return self.page("docs/reader.html", self._frame(shown, whole=whole)).content.decode()
        space = self.space
        identity = (space.title, space.visibility, space.organization.title, person, self.role)
        digest = hashlib.sha256(repr((identity, secret, page.path)).encode()).hexdigest()
        # In the shared cache (settings.cache): every process sees the same shells, and a
        # change of role (membership) or of the space's visibility or title is another key,
        # seen at the next read whichever process serves it.
        revision = shown.revision_id
        key = f"reader-shell:2:{revision}:{page.pk}:{int(whole)}:{digest}"
        shell = cache.get(key)
        if shell is None:
            shell = self.page("docs/reader.html", self._frame(shown, whole=whole)).content.decode()
            cache.set(key, shell, 3600)
        return shell

    def _record_view(self, response) -> None:
        visitor, who = space_reader(self.request)
        visits.space_view_once(space=self.space, visitor=visitor, who=who)
        remember_visitor(response, self.request, visitor)


class BlockActionView(SpaceView):
    """POST: press a block's button (or change its inputs) on a page of the current revision.
    The block is found in the page by its key, so its integration and props are the page's,
    never the form's. Answers the block's HTML to a script, else goes back to the page."""

    def post(self, request):
        if self.role is None:
            raise Http404("No such block.")
        path, key = request.POST.get("page", ""), request.POST.get("key", "")
        place = functools.partial(self.block_place, interactive=True)
        shown = shown_page(self.space, path, claims=None, place=place) if path else None
        ref = shown.block(key) if shown else None
        if ref is None:
            raise Http404("No such block on this page (it may have been removed meanwhile).")
        html = provider().act(ref, shown.place(), request.POST)
        if request.headers.get("X-Requested-With") == "fetch":
            return HttpResponse(html)
        return redirect(reverse("docs:page", args=[self.space.pk, shown.path]) + f"#block-{key}")
