"""The navigation of a revision rendered once, as HTML, and reused by every page of it: the
reader's and a published site's (their address prefix tells them apart).

A navigation of at most ``WHOLE_UP_TO`` pages is shown whole. A larger one shows the pages at
the top and the branch of the page being read (the pages under each page above it, and under
it): a page of a 10,000-page space carries the links a reader can follow from there, not
10,000 of them; a page whose children are not shown says so (``data-closed``), and opening it
shows them.

The HTML is built here (a list of links is no work for a template engine: 200 links through
Django's templates took 10 ms, here a tenth of one) without a current page and kept in the
shared cache (``settings.cache``), keyed by the revision, the pages shown (a visitor's claims
may hide some), the branch opened, the prefix and ``MARKUP`` (bumped when the markup changes);
each page marks its own link in the kept HTML. A revision never changes, so the key never
needs purging: a new revision is another key.
"""

import hashlib

from django.core.cache import cache
from django.utils.html import escape
from django.utils.safestring import SafeString, mark_safe

from .navigation import NavItem, navigation, open_branch

#: The markup's version: part of every key.
MARKUP = 3
#: How long a rendered navigation is kept unread.
KEPT_SECONDS = 24 * 3600
#: The largest navigation shown whole.
WHOLE_UP_TO = 200


def nav_html(
    revision_id: str | None,
    roots: list[NavItem],
    ordered: list[NavItem],
    *,
    prefix: str,
    current_path: str | None,
) -> SafeString:
    """The tree ``roots`` (of ``revision_id``, every page of it shown in ``ordered``) as HTML,
    its links ``prefix`` + a page's path, the one of ``current_path`` marked as the current
    page."""
    whole = len(ordered) <= WHOLE_UP_TO
    opened = None if whole else open_branch(revision_id, ordered, current_path)
    if ordered is navigation(revision_id)[1]:
        shown = "every page"  # the whole revision, as its people see it
    else:
        shown = "\n".join(item.path for item in ordered)
    branch = "whole" if opened is None else "\n".join(opened)
    text = f"{prefix}\n{MARKUP}\n{branch}\n{shown}"
    key = f"nav-html:{MARKUP}:{revision_id}:{hashlib.sha256(text.encode()).hexdigest()}"
    html = cache.get(key)
    if html is None:
        html = _listed(roots, escape(prefix), None if opened is None else set(opened))
        cache.set(key, html, KEPT_SECONDS)
    if current_path is not None:
        link = f'href="{escape(prefix + current_path)}"'
        html = html.replace(f"{link}>", f'{link} aria-current="page">', 1)
    return mark_safe(html)  # noqa: S308 - rendered by the template, names escaped there


def _listed(items: list[NavItem], prefix: str, opened: set[str] | None) -> str:
    """``items`` as a list of links (``prefix``: escaped), the pages under an item listed
    inside it when ``opened`` is None or holds it."""
    parts = ['<ul class="doc-nav-list">']
    for item in items:
        link = f'<a href="{prefix}{escape(item.path)}"'
        if item.children and opened is not None and item.path not in opened:
            count = len(item.children)
            under = f"{count} page{'s' if count != 1 else ''} under it"
            parts.append(f'<li>{link} data-closed title="{under}">{escape(item.title)}</a></li>')
            continue
        parts.append(f"<li>{link}>{escape(item.title)}</a>")
        if item.children:
            parts.append(_listed(item.children, prefix, opened))
        parts.append("</li>")
    parts.append("</ul>")
    return "".join(parts)
