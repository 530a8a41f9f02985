"""Writes of published sites: a visitor's view of a page and a visitor's feedback on one. The
site's pages, the beacon (``api.sites``) and anything else call these, so the rules hold
whichever door was used; the events themselves are written by ``docplatform.services``.
"""

import hashlib
from datetime import timedelta

from django.conf import settings
from django.core.cache import cache
from django.core.exceptions import ValidationError
from django.db import IntegrityError, transaction
from django.utils import timezone

from .. import services
from ..documents.visits import reader_identity
from ..events import FEEDBACK_RATINGS, Visitor
from ..models import Page, Site
from .addresses import page_key
from .models import PageFeedback, SiteVisit
from .selectors import readable_spaces

#: A visitor's views of one page of a site fire ``site_view`` at most this often (README).
SITE_VIEW_INTERVAL = timedelta(minutes=1)
MAX_COMMENT_LENGTH = PageFeedback._meta.get_field("comment").max_length
NOT_THE_SITES = (
    "is not an address of this site's pages: it must be under {sites_url}/{site}/ or on one "
    "of the site's custom domains"
)


def site_view_record_once(
    *, site: Site, visitor: Visitor, who: str, url: str, referrer: str = ""
) -> bool:
    """A visitor viewed the page at ``url``: fire ``site_view``, at most once per visitor
    (``who``: ``visitors.site_visitor``), page and SITE_VIEW_INTERVAL across every process
    (the ``SiteVisit`` row's time is the lock). ValidationError naming ``url`` when it is not
    one of the site's addresses. Whether it fired."""
    key = page_key(site, url)
    if key is None:
        raise ValidationError({"url": [_not_the_sites(site)]})
    seen = "site-view-seen:" + hashlib.sha256(f"{site.pk}\n{who}\n{key}".encode()).hexdigest()
    if cache.get(seen):  # spares a database round trip at every view; the row decides
        return False
    fired = _fire_once(site=site, visitor=visitor, who=who, key=key, url=url, referrer=referrer)
    cache.set(seen, True, SITE_VIEW_INTERVAL.total_seconds())
    return fired


def _fire_once(*, site, visitor, who, key, url, referrer) -> bool:
    now = timezone.now()
    with transaction.atomic():
        if not _took_visit(site, who, key, now):
            return False  # viewed within the interval (or by a concurrent request)
        # A browser without the cookie counts by its address until it sends back the id it
        # is given now: that id has seen the page too, so its next view is not another one.
        given = f"anon:{visitor.anonymous_id}"
        if given != who:
            _took_visit(site, given, key, now)
        services.site_view_record(site=site, visitor=visitor, url=url, referrer=referrer)
    return True


def _took_visit(site, who, key, now) -> bool:
    """Mark the visitor's view of the page now unless it was within the interval: whether it
    was marked (the row is the lock)."""
    renewed = SiteVisit.objects.filter(
        site=site, visitor=who, page=key, last_fired_at__lte=now - SITE_VIEW_INTERVAL
    ).update(last_fired_at=now)
    if renewed:
        return True
    try:
        with transaction.atomic():
            SiteVisit.objects.create(site=site, visitor=who, page=key, last_fired_at=now)
    except IntegrityError:
        return False
    return True


def site_visits_purge() -> int:
    """Forget the views older than SITE_VIEW_INTERVAL: the next view fires again anyway, so
    their rows only grow the table (one per visitor, site and page)."""
    deleted, _ = SiteVisit.objects.filter(
        last_fired_at__lt=timezone.now() - SITE_VIEW_INTERVAL
    ).delete()
    return deleted


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
