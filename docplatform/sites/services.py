"""Writes of published sites: a visitor's view of a page and a visitor's feedback on one. The
site's pages, the beacon (``sites.api``) and anything else call these, so the rules hold
whichever door was used; the events themselves are written by ``docplatform.services``.
"""

from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import transaction

from .. import services
from ..events import FEEDBACK_RATINGS, Visitor
from ..models import Page, Site
from ..visits import SITE_VIEW_INTERVAL, VisitKind, reader_identity, view_fire_once, visits_purge
from .addresses import page_key
from .models import PageFeedback, SiteVisit
from .selectors import readable_spaces

#: ``site_view``: a ``SiteVisit`` row per visitor, site and page.
SITE_VIEWS = VisitKind(SiteVisit, SITE_VIEW_INTERVAL)
MAX_COMMENT_LENGTH = PageFeedback._meta.get_field("comment").max_length
NOT_THE_SITES = (
    "is not an address of this site's pages: it must be under {sites_url}/{site}/ or on one "
    "of the site's custom domains"
)


def site_view_record_once(
    *, site: Site, visitor: Visitor, who: str, url: str, referrer: str = ""
) -> bool:
    """A visitor viewed the page at ``url``: fire ``site_view``, at most once per visitor
    (``who``: ``visitors.site_visitor``), page and SITE_VIEW_INTERVAL, by the one rule of every
    view (``docplatform.visits``). ValidationError naming ``url`` when it is not one of the
    site's addresses. Whether it fired."""
    key = page_key(site, url)
    if key is None:
        raise ValidationError({"url": [_not_the_sites(site)]})
    return view_fire_once(
        SITE_VIEWS,
        {"site": site, "page": key},
        visitor=visitor,
        who=who,
        fire=lambda: services.site_view_record(
            site=site, visitor=visitor, url=url, referrer=referrer
        ),
    )


def site_visits_purge() -> int:
    """Forget the views older than SITE_VIEW_INTERVAL (one row per visitor, site and page)."""
    return visits_purge(SITE_VIEWS)


def page_feedback_give(
    *,
    site: Site,
    page: Page,
    rating: str,
    comment: str = "",
    visitor: Visitor,
    who: str,
    url: str,
    referrer: str = "",
) -> PageFeedback:
    """A visitor rates a page (of a space the site publishes and its visitors may read) with
    an optional comment: one rating per visitor and page (a second replaces the first), and
    ``page_feedback`` fires at each. ValidationError naming the field (``rating``,
    ``comment``, ``pageId``, ``url``), with nothing written."""
    errors = {}
    if rating not in FEEDBACK_RATINGS:
        errors["rating"] = [f"must be one of {', '.join(FEEDBACK_RATINGS)}"]
    problem = comment_problem(comment)
    if problem:
        errors["comment"] = [problem]
    space = page.space
    if not readable_spaces(site).filter(pk=space.pk).exists():
        errors["pageId"] = ["the page is not on this site"]
    if page_key(site, url) is None:
        errors["url"] = [_not_the_sites(site)]
    if errors:
        raise ValidationError(errors)
    with transaction.atomic():
        _adopt_rating_by_address(space=space, page_path=page.path, visitor=visitor, who=who)
        feedback, _ = PageFeedback.objects.update_or_create(
            space=space,
            page_path=page.path,
            visitor=who,
            defaults={"site": site, "page": page, "rating": rating, "comment": comment},
        )
        services.page_feedback_record(
            site=site,
            page=page,
            rating=rating,
            comment=comment,
            visitor=visitor,
            url=url,
            referrer=referrer,
        )
    return feedback


def _adopt_rating_by_address(*, space, page_path: str, visitor: Visitor, who: str) -> None:
    """A browser that rated the page before it had the cookie was counted by its address and
    user agent: now that it sends the id back, that rating is this id's (one per visitor)."""
    by_address = reader_identity(visitor, known_cookie=False)
    if by_address == who:
        return
    ratings = PageFeedback.objects.filter(space=space, page_path=page_path)
    if not ratings.filter(visitor=who).exists():
        ratings.filter(visitor=by_address).update(visitor=who)


def comment_problem(comment) -> str | None:
    """Why ``comment`` cannot be kept, or None."""
    if not isinstance(comment, str):
        return "must be text"
    if len(comment) > MAX_COMMENT_LENGTH:
        return f"at most {MAX_COMMENT_LENGTH:,} characters ({len(comment):,} given)"
    if "\x00" in comment or not _encodable(comment):
        return "holds characters that are not text"
    return None


def _encodable(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:  # a lone surrogate
        return False
    return True


def _not_the_sites(site: Site) -> str:
    return NOT_THE_SITES.format(sites_url=settings.SITES_URL, site=site.pk)
