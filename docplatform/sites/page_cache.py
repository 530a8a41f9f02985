"""A published site's public pages kept in the shared cache (``settings.cache``) and told to
CDNs and browsers (``ETag``, ``Cache-Control``).

A page is shared between visitors only when it is the same for all of them: a public site
(an authenticated one's visitors are each signed in: ``private, no-store``), a page with
nothing adaptive in it (its navigation included: else ``private, no-cache``), no block (what
a block shows changes with its state and its installation, not with the revision: rendered at
every view, ``no-cache``), and not the answer to a rating (``?feedback=``). Nothing of the
visitor is in its HTML: the sites origin has no session and no CSRF token, the feedback form
and the scripts are the same for everyone.

Such a page is kept under a key derived from everything it shows: the site's row (title,
audience, domains), the space's (title, current revision), the page's address, the renderer
and the templates' text. Writing a revision, renaming the site or the space, or deploying
new templates makes another key: nothing is purged by hand, the old entries expire. The key
is also the page's ``ETag``: a browser or CDN sending it back (``If-None-Match``) gets a 304.

Its ``Cache-Control`` lets a shared cache keep it ``SITE_CACHE_SECONDS`` and serve it stale
``SITE_CACHE_STALE_SECONDS`` more while it revalidates; browsers revalidate at every view. An
answer that gives the visitor their anonymous cookie (their first view) is ``private``: a
shared cache must never hand one visitor's cookie to another.
"""

import hashlib
from dataclasses import dataclass

from django.conf import settings
from django.core.cache import cache
from django.template.loader import get_template

from ..markdown import RENDERER_VERSION
from ..models import Site, Space
from ..reading import nav_html

#: The templates a site's page is made of: their text is part of every key.
TEMPLATES = (
    "sites/base.html",
    "sites/page.html",
    "sites/_feedback.html",
    "docs/_article.html",
)
#: How long a kept page stays in the cache unread (a new key replaces it anyway).
KEPT_SECONDS = 24 * 3600
PRIVATE = "private, no-cache"
PERSONAL = "private, no-store"
UNKEPT = "no-cache"
_templates_digest: list[str] = []


@dataclass(frozen=True)
class KeptPage:
    html: str
    path: str  # the page shown (a space's address shows its first page)


def shared_key(request, site: Site, space: Space, page_path: str | None) -> str | None:
    """The key the page at ``page_path`` is kept under, None when this answer is never shared
    (an authenticated site, a method other than GET or HEAD, a rating's answer)."""
    if site.authenticated or request.method not in ("GET", "HEAD"):
        return None
    if "feedback" in request.GET:
        return None
    shown = repr(
        (
            site.pk,
            site.title,
            site.audience,
            site.custom_domains,
            space.pk,
            space.title,
            space.visibility,
            space.current_revision_id,
            page_path or "",
            RENDERER_VERSION,
            nav_html.MARKUP,
            _templates(),
            settings.SITES_URL,
        )
    )
    return f"site-page:1:{hashlib.sha256(shown.encode()).hexdigest()}"


def _templates() -> str:
    if not _templates_digest:
        sources = "\n".join(get_template(name).template.source for name in TEMPLATES)
        _templates_digest.append(hashlib.sha256(sources.encode()).hexdigest()[:16])
    return _templates_digest[0]


def kept(key: str | None) -> KeptPage | None:
    return cache.get(key) if key else None


def keep(key: str, page: KeptPage) -> None:
    cache.set(key, page, KEPT_SECONDS)


def etag(key: str) -> str:
    return f'"{key.rsplit(":", 1)[1][:32]}"'


def not_modified(request, key: str) -> bool:
    """Whether the request's ``If-None-Match`` names the kept page's ETag."""
    sent = request.headers.get("If-None-Match", "")
    tags = {tag.strip().removeprefix("W/") for tag in sent.split(",")}
    return etag(key) in tags or "*" in tags


def mark_shared(response, key: str, *, sets_cookie: bool) -> None:
    """A kept page's headers: its ETag, and whether shared caches may keep it."""
    response["ETag"] = etag(key)
    if sets_cookie or not settings.SITE_CACHE_SECONDS:
        response["Cache-Control"] = PRIVATE
        return
    response["Cache-Control"] = (
        f"public, max-age=0, s-maxage={settings.SITE_CACHE_SECONDS}, "
        f"stale-while-revalidate={settings.SITE_CACHE_STALE_SECONDS}"
    )
