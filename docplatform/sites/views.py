"""A published site's pages on the sites origin (``sites.middleware``): its spaces, a space's
pages rendered as the reader renders them (its blocks too, read-only unless made for visitors),
its search, and what visitors send (feedback, block presses). Thin: selectors read, services
write. Nobody of the platform is signed in here; a visitor's claims (``visitor_sessions``)
decide which adaptive content they see (``reading.showing``)."""

import json

from django.core.exceptions import ValidationError
from django.http import (
    Http404,
    HttpResponse,
    HttpResponseNotModified,
    HttpResponseServerError,
    JsonResponse,
)
from django.shortcuts import redirect, render
from django.template.loader import render_to_string
from django.urls import reverse
from django.utils.functional import cached_property
from django.views import View

from ..client_address import client_ip
from ..content import page_path_problem
from ..events import FEEDBACK_RATINGS
from ..models import Page
from ..reading import navigation, search
from ..reading.blocks import BlockPlace, provider
from ..reading.showing import ShownPage, shown_page
from ..visitor_rates import wait_seconds
from ..visitors import VISITOR_COOKIE, remember_visitor
from . import page_cache, selectors, services, visitor_gate
from .addresses import is_http_url, page_url, site_url
from .visitor_gate import wants_json
from .visitor_sessions import visitor_claims
from .visitors import site_visitor


class SiteView(View):
    """A page of one site (``<SITES_URL>/<site id>/...``): 404 for an unknown site. An
    authenticated site's door (``visitor_gate``) comes first: nothing of the site is read for
    a visitor it stops. ``sends_to_sign_in``: a page the door sends such a visitor to sign in
    for (and back to); elsewhere it answers 401."""

    sends_to_sign_in = True

    def dispatch(self, request, *args, **kwargs):
        self.site = selectors.site_for_visitors(kwargs.pop("site_id"))
        stopped = visitor_gate.refusal(request, self.site, sends_to_sign_in=self.sends_to_sign_in)
        if stopped is not None:
            return stopped
        self.load(kwargs)
        return super().dispatch(request, *args, **kwargs)

    def load(self, kwargs: dict) -> None:
        """Read what the address names besides the site (popping it from ``kwargs``)."""

    @cached_property
    def claims(self) -> dict:
        """The visitor's claims ({} without a visitor session): what adaptive content holds
        for them."""
        return visitor_claims(self.request, self.site)

    def page(self, template: str, context: dict, *, status: int = 200) -> HttpResponse:
        return render(self.request, template, {"site": self.site, **context}, status=status)

    def counted(self, response: HttpResponse, url: str) -> HttpResponse:
        """The visit of ``url`` fires ``site_view`` (at most once per visitor and page a
        minute: ``services``); the visitor keeps the site's anonymous cookie."""
        visitor, who = site_visitor(self.request, self.site)
        if self.request.method == "GET":  # not HEAD: nobody looked at it
            referrer = self.request.META.get("HTTP_REFERER", "")
            services.site_view_record_once(
                site=self.site,
                visitor=visitor,
                who=who,
                url=url,
                referrer=referrer if is_http_url(referrer) else "",
            )
        remember_visitor(response, self.request, visitor)
        return response


class SiteHomeView(SiteView):
    """The site's title and the spaces it lists."""

    def get(self, request):
        spaces = selectors.listed_spaces(self.site)
        return self.counted(self.page("sites/home.html", {"spaces": spaces}), site_url(self.site))


class SiteSearchView(SiteView):
    """``?q=``: the site's pages holding the words; a 429 past the address's search rate."""

    sends_to_sign_in = False

    def get(self, request):
        query = request.GET.get("q", "").strip()
        problem = search.query_problem(query)
        refusal = search.rate_refusal(client_ip(request)) if query and not problem else None
        if refusal is not None:
            message, wait = refusal
            response = self.page(
                "sites/search.html", {"query": query, "refused": message}, status=429
            )
            response["Retry-After"] = str(wait)
            return response
        hits = [] if problem else selectors.site_search(self.site, query, self.claims)
        context = {"query": query, "problem": problem, "hits": hits}
        return self.page("sites/search.html", context, status=400 if problem else 200)


class SpaceOnSiteView(SiteView):
    """A page of one space the site publishes: 404 for a space it does not, or a private
    one."""

    def load(self, kwargs: dict) -> None:
        self.space = selectors.space_on_site(self.site, kwargs.pop("space_id"))

    def page_of(self, path: str | None) -> Page | None:
        """The page at ``path``, None when there is none or it is hidden from this visitor."""
        return navigation.page_in(self.space.current_revision_id, path, self.claims)

    def block_place(self, page_path: str) -> BlockPlace:
        return BlockPlace(
            space=self.space,
            page_path=page_path,
            request=self.request,
            interactive=True,
            action_url=reverse("sites:block-press", args=[self.site.pk, self.space.pk]),
            for_visitors=True,
        )

    def refused(self, request, errors: dict, *, status: int = 400, retry_after: int = 0):
        """A refusal naming the fields: JSON to a script, else a page with a way back."""
        if wants_json(request):
            response = JsonResponse({"errors": errors}, status=status)
        else:
            back = reverse("sites:space", args=[self.site.pk, self.space.pk])
            context = {"space": self.space, "errors": errors, "back": back}
            response = self.page("sites/refused.html", context, status=status)
        if retry_after:
            response["Retry-After"] = str(retry_after)
        return response

    def refusal(self, request, scope: str):
        """Why this POST is refused before its content is read (None: it is not): a form
        of another site (its Origin), or one over the address's rate (``SITE_RATES``)."""
        origin = request.headers.get("Origin")
        if origin is not None and origin != f"{request.scheme}://{request.get_host()}":
            return self.refused(request, {"origin": ["sent from another site"]}, status=403)
        wait = wait_seconds(scope, client_ip(request))
        if wait:
            message = f"too many requests from your address: try again in {wait} seconds"
            return self.refused(request, {"rate": [message]}, status=429, retry_after=wait)
        return None


class SitePageView(SpaceOnSiteView):
    """A page of the space (its first page without a path), with the site's navigation and
    the feedback form. A page the same for every visitor is kept in the shared cache and
    told to CDNs and browsers (``page_cache``)."""

    def get(self, request, page_path=None):
        key = page_cache.shared_key(request, self.site, self.space, page_path)
        found = page_cache.kept(key)
        if found is not None:
            if page_cache.not_modified(request, key):
                response = HttpResponseNotModified()
            else:
                response = HttpResponse(found.html)
            return self.shared(response, key, found.path)
        shown = shown_page(
            self.space,
            page_path,
            claims=self.claims,
            prefix=reverse("sites:space", args=[self.site.pk, self.space.pk]),
            place=self.block_place,
        )
        if shown is None:
            raise Http404("No such page.")  # the same whether missing or hidden by a condition
        page = shown.page
        response = self.page("sites/page.html", self.context(shown))
        adaptive = page is not None and shown.adaptive
        if key is not None and page is not None and not adaptive and not shown.has_blocks:
            page_cache.keep(key, page_cache.KeptPage(response.content.decode(), page.path))
            return self.shared(response, key, page.path)
        if self.site.authenticated:
            response["Cache-Control"] = page_cache.PERSONAL  # a signed-in visitor's page
        elif key is None or adaptive:
            response["Cache-Control"] = page_cache.PRIVATE  # a rating's answer, or adaptive
        else:
            response["Cache-Control"] = page_cache.UNKEPT  # blocks show what is now
        return self.counted(response, page_url(self.site, self.space, shown.path or ""))

    def context(self, shown: ShownPage) -> dict:
        """What the page's template shows: the shown page's frame (``reading.showing``) with
        the site's own, the canonical address and the feedback form."""
        context = {"space": self.space, **shown.frame()}
        if shown.page is not None:
            rating = self.request.GET.get("feedback")
            context |= {
                "canonical": page_url(self.site, self.space, shown.page.path),
                "ratings": FEEDBACK_RATINGS,
                "rated": rating in FEEDBACK_RATINGS,
            }
        return context

    def shared(self, response, key: str, path: str) -> HttpResponse:
        """A page kept for every visitor: counted as a view, with its ETag and whether shared
        caches may keep it (not an answer that sets the visitor's cookie)."""
        response = self.counted(response, page_url(self.site, self.space, path))
        page_cache.mark_shared(response, key, sets_cookie=VISITOR_COOKIE in response.cookies)
        return response


class FeedbackView(SpaceOnSiteView):
    """POST a rating (``good``, ``ok``, ``bad``) of a page with an optional comment, as JSON
    (the page's script: answers JSON) or as a form (goes back to the page)."""

    sends_to_sign_in = False

    def post(self, request):
        refusal = self.refusal(request, "feedback")
        if refusal is not None:
            return refusal
        data = _submitted(request)
        if isinstance(data, str):
            return self.refused(request, {"body": [data]})
        path = data.get("page")
        page = None if page_path_problem(path) else self.page_of(path)
        if page is None:
            return self.refused(request, {"page": ["no such page in this space"]})
        referrer = data.get("referrer") or ""
        if referrer and not is_http_url(referrer):
            return self.refused(request, {"referrer": ["must be an http or https URL"]})
        visitor, who = site_visitor(request, self.site)
        try:
            feedback = services.page_feedback_give(
                site=self.site,
                page=page,
                rating=data.get("rating"),
                comment=data.get("comment", ""),
                visitor=visitor,
                who=who,
                url=page_url(self.site, self.space, page.path),
                referrer=referrer,
            )
        except ValidationError as error:
            return self.refused(request, error.message_dict)
        if wants_json(request):
            answer = {"page": page.path, "rating": feedback.rating, "comment": feedback.comment}
            response = JsonResponse(answer)
        else:
            address = reverse("sites:page", args=[self.site.pk, self.space.pk, page.path])
            response = redirect(f"{address}?feedback={feedback.rating}#feedback")
            response.status_code = 303
        remember_visitor(response, request, visitor)
        return response


class BlockPressView(SpaceOnSiteView):
    """POST: a visitor presses a block's button on a page of the current revision (only a
    block made for visitors takes it: the block provider decides). Answers the block's HTML
    to the page's script, else goes back to the page."""

    sends_to_sign_in = False

    def post(self, request):
        refusal = self.refusal(request, "blocks")
        if refusal is not None:
            return refusal
        path, key = request.POST.get("page", ""), request.POST.get("key", "")
        shown = None
        if path and not page_path_problem(path):
            shown = shown_page(self.space, path, claims=self.claims, place=self.block_place)
        ref = shown.block(key) if shown else None
        if ref is None:
            raise Http404("No such block on this page (it may have been removed meanwhile).")
        html = provider().act(ref, shown.place(), request.POST)
        if request.headers.get("X-Requested-With") == "fetch":
            return HttpResponse(html)
        address = reverse("sites:page", args=[self.site.pk, self.space.pk, shown.path])
        return redirect(f"{address}#block-{key}")


def _submitted(request) -> dict | str:
    """The POST's fields, from a JSON object or a form; or why they cannot be read."""
    if request.content_type != "application/json":
        return request.POST.dict()
    try:
        data = json.loads(request.body)
    except (ValueError, UnicodeDecodeError) as error:
        return f"is not JSON: {error}"
    return data if isinstance(data, dict) else "must be a JSON object"


def not_found(request, exception=None):
    """The 404 page, with the site's title and search when the address names a site."""
    match = getattr(request, "resolver_match", None)
    site_id = match.kwargs.get("site_id") if match else None
    site = selectors.site_or_none(site_id) if site_id else None
    return render(request, "sites/not_found.html", {"site": site}, status=404)


def server_error(request):
    return HttpResponseServerError(render_to_string("sites/server_error.html"))
