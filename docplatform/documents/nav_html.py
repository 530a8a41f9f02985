"""The navigation of a revision rendered once, as HTML, and reused by every page of it: the
reader's and a published site's (their address prefix tells them apart).

The tree of a revision (``selectors.navigation_for``) is the same for every page of it, and
for every reader who is shown the same pages; only which link is the current page differs.
It is rendered without a current page and kept in the shared cache (``settings.cache``),
keyed by the revision, the pages shown (a visitor's claims may hide some), the prefix and the
template's text; each page marks its own link in the kept HTML. A revision never changes, so
the key never needs purging: a new revision is another key.
"""

import hashlib

from django.core.cache import cache
from django.template.loader import get_template
from django.utils.html import escape
from django.utils.safestring import SafeString, mark_safe

from .selectors import NavItem

TEMPLATE = "docs/_nav.html"
#: How long a rendered navigation is kept unread.
KEPT_SECONDS = 24 * 3600
_template_digest: list[str] = []


def template_digest() -> str:
    """A digest of the navigation's template as this process reads it: a deploy that changes
    it makes other keys."""
    if not _template_digest:
        source = get_template(TEMPLATE).template.source
        _template_digest.append(hashlib.sha256(source.encode()).hexdigest()[:16])
    return _template_digest[0]


def nav_html(
    revision_id: str | None,
    roots: list[NavItem],
    ordered: list[NavItem],
    *,
    prefix: str,
    current_path: str | None,
) -> SafeString:
    """The tree ``roots`` (of ``revision_id``, every page of it in ``ordered``) as HTML, its
    links ``prefix`` + a page's path, the one of ``current_path`` marked as the current page."""
    shown = "\n".join(item.path for item in ordered)
    digest = hashlib.sha256(f"{prefix}\n{template_digest()}\n{shown}".encode()).hexdigest()
    key = f"nav-html:1:{revision_id}:{digest}"
    html = cache.get(key)
    if html is None:
        context = {"items": roots, "nav_prefix": prefix, "current_path": None}
        html = get_template(TEMPLATE).render(context)
        cache.set(key, html, KEPT_SECONDS)
    if current_path is not None:
        link = f'href="{escape(prefix + current_path)}"'
        html = html.replace(f"{link}>", f'{link} aria-current="page">', 1)
    return mark_safe(html)  # noqa: S308 - rendered by the template, names escaped there
