"""Reads of published sites: what a site's visitors may see, the sites as their
organization's people see them, and the visitors' feedback as a space's admins see it.

Only a published site is served: an unpublished one is unknown on ``SITES_URL`` (404), its
pages, search and beacon alike. A site shows the spaces it publishes that anyone may read
(``documents.access``), in the order its admins gave: public ones are listed and searched;
unlisted ones open by their address but are neither listed nor searched; private ones are
unknown there (404), as are the spaces it does not publish.

Adaptive content (README, "Adaptive content"): a page whose condition does not hold for the
visitor's claims is unknown to them (404, out of the navigation, previous and next), and its
adaptive sections whose conditions do not hold are not in it: a site's page is shown as every
page is (``reading.showing``), with the claims the site's views read
(``visitor_sessions.visitor_claims``; {} for a visitor without a session).
"""

from collections import Counter
from dataclasses import dataclass, field

from django.db.models import Count, Prefetch, Q, QuerySet
from django.http import Http404

from ..access import OPEN_VISIBILITIES
from ..conditions import compiled
from ..markdown import ADAPTIVE_INFO
from ..models import Organization, Page, Site, Space
from ..page_versions import current_pages
from ..reading import search
from ..reading.document import page_document
from .addresses import page_url
from .models import PageFeedback, SiteSpace

#: The feedback entries the space settings show, newest first, at most.
FEEDBACK_SHOWN = 200


def site_or_none(site_id: str) -> Site | None:
    """A published site; None for an unknown or unpublished one."""
    return Site.objects.filter(pk=site_id, published=True).first()


def site_for_visitors(site_id: str) -> Site:
    site = site_or_none(site_id)
    if site is None:
        raise Http404("No such site.")
    return site


def site_spaces(site: Site) -> QuerySet:
    """The spaces the site publishes, in the order its admins gave."""
    return Space.objects.filter(site_placements__site=site).order_by(
        "site_placements__position", "title", "pk"
    )


def site_space_ids(site: Site) -> list[str]:
    return list(site_spaces(site).values_list("pk", flat=True))


def sites_of(organization: Organization) -> QuerySet:
    """The organization's sites, published or not, each with its spaces in their order
    (``placements``, with their spaces): what the Sites page lists."""
    placements = SiteSpace.objects.select_related("space")
    return (
        Site.objects.filter(organization=organization)
        .order_by("title", "pk")
        .prefetch_related(Prefetch("placements", queryset=placements))
    )


def readable_spaces(site: Site) -> QuerySet:
    """The spaces the site publishes that its visitors may open, in the site's order."""
    return site_spaces(site).filter(visibility__in=OPEN_VISIBILITIES)


def listed_spaces(site: Site) -> QuerySet:
    """The spaces the site lists and searches, in the site's order: its public ones."""
    return site_spaces(site).filter(visibility=Space.Visibility.PUBLIC)


def space_on_site(site: Site, space_id: str) -> Space:
    """A space the site publishes and its visitors may read; Http404 otherwise."""
    space = readable_spaces(site).select_related("organization").filter(pk=space_id).first()
    if space is None:
        raise Http404("No such space on this site.")
    return space


def page_on_site(site: Site, page_id: str) -> Page | None:
    """A page (of any revision) of a space the site publishes and its visitors may read."""
    return (
        Page.objects.select_related("space")
        .filter(pk=page_id, space__in=readable_spaces(site))
        .first()
    )


def adaptive_outline(site: Site) -> dict:
    """What the site's adaptive content asks of its visitors (``site:adaptive:read``): the
    claim names its conditions read, and each condition with where it applies (a page, or
    the n-th adaptive section of a page, from 1), across the current revisions of the spaces
    its visitors may open, in the site's order."""
    spaces = list(readable_spaces(site).exclude(current_revision=None))
    rows = (
        current_pages([space.pk for space in spaces])
        .filter(~Q(condition="") | Q(body__contains=ADAPTIVE_INFO))
        .order_by("position", "path")
    )
    by_space: dict[str, list[Page]] = {}
    for page in rows:
        by_space.setdefault(page.space_id, []).append(page)
    conditions: list[dict] = []
    for space in spaces:
        for page in by_space.get(space.pk, []):
            where = {"space": space.pk, "path": page.path}
            if page.condition:
                conditions.append({**where, "condition": page.condition})
            for section in page_document(page).sections:
                section_number = {"section": section.index + 1}
                conditions.append({**where, **section_number, "condition": section.condition})
    names: set[str] = set()
    for entry in conditions:
        condition = compiled(entry["condition"])
        names.update(condition.names() if condition is not None else [])
    return {"claims": sorted(names), "conditions": conditions}


# --- Feedback, for the space's admins ---------------------------------------------------------


@dataclass
class PageFeedbackSummary:
    """The feedback on one page of the space: counts per rating and the entries, newest
    first."""

    path: str
    title: str
    current: bool  # the page is in the space's current revision
    counts: Counter = field(default_factory=Counter)
    entries: list[PageFeedback] = field(default_factory=list)

    @property
    def tally(self) -> list[tuple[str, str, int]]:
        """(rating, its label, how many) for each rating."""
        return [(value, label, self.counts[value]) for value, label in PageFeedback.Rating.choices]


def feedback_context(space: Space) -> dict:
    """What the space's settings page shows of the visitors' feedback: per page (the page
    with the newest feedback first) its counts and its latest entries; and where the space is
    published."""
    titles = dict(current_pages([space.pk]).values_list("path", "title"))
    pages: dict[str, PageFeedbackSummary] = {}
    entries = PageFeedback.objects.filter(space=space).select_related("site")
    for entry in entries.order_by("-updated_at", "-id")[:FEEDBACK_SHOWN]:
        summary = pages.setdefault(
            entry.page_path,
            PageFeedbackSummary(
                entry.page_path,
                titles.get(entry.page_path, entry.page_path),
                current=entry.page_path in titles,
            ),
        )
        summary.entries.append(entry)
    counted = (
        entries.filter(page_path__in=pages)
        .order_by()
        .values_list("page_path", "rating")
        .annotate(number=Count("id"))
    )
    for path, rating, number in counted:
        pages[path].counts[rating] = number
    sites = space.sites.filter(published=True).order_by("title", "pk")
    return {
        "feedback_pages": list(pages.values()),
        "published_on": [(site, page_url(site, space)) for site in sites],
    }


def site_search(site: Site, query: str, claims: dict | None = None) -> list[search.SearchHit]:
    """The pages of the site's listed spaces that match ``query`` for a visitor with
    ``claims`` (None: a visitor without any), best first (at most MAX_HITS)."""
    return search.spaces_search(listed_spaces(site), query, claims=claims or {})
