"""A published site's addresses: the one home of the rule "is this URL one of the site's
pages?", asked by the site's own views and by the beacon alike (``sites.services``).

A site's pages are ``<SITES_URL>/<site id>/`` (its spaces), ``<SITES_URL>/<site id>/<space
id>/<page path>`` and anything else under ``<SITES_URL>/<site id>/``; and, for a site served
elsewhere too, any http or https URL on one of its ``custom_domains`` hosts.
"""

import hashlib
from urllib.parse import unquote, urlsplit

from django.conf import settings
from django.core.exceptions import ValidationError
from django.core.validators import URLValidator

from ..models import Site, Space

MAX_URL_LENGTH = 2000
_HTTP_URL = URLValidator(schemes=["http", "https"])
#: Views of a URL whose key would be longer are counted under the URL's digest.
MAX_KEY_LENGTH = 340


def site_url(site: Site) -> str:
    return f"{settings.SITES_URL}/{site.pk}/"


def page_url(site: Site, space: Space, page_path: str = "") -> str:
    """The absolute address of a page of ``space`` on the site (page paths hold only URL-safe
    characters: ``content.page_path_problem``); without a path, the space's own address."""
    return f"{settings.SITES_URL}/{site.pk}/{space.pk}/{page_path}"


def site_page_address(site: Site, space: Space | None, page) -> str:
    """A page's address on the site (the site's home without a page)."""
    if space is None or page is None:
        return site_url(site)
    return page_url(site, space, page.path)


def page_key(site: Site, url: str) -> str | None:
    """Under which key a view of ``url`` is counted (``SiteVisit.page``), or None when ``url``
    is not one of the site's addresses. On the sites origin the key is the address's path
    below the site (``<space id>/<page path>``, so the site's own views and the beacon's count
    together); on a custom domain, a digest of the host and path. Query and fragment never
    make another page."""
    if not is_http_url(url):
        return None
    try:
        parts = urlsplit(url)
        origin = _origin(parts)
    except ValueError:  # a malformed address (an invalid port, an unclosed "[")
        return None
    if not parts.hostname or parts.username is not None:
        return None
    if any(unquote(segment) in (".", "..") for segment in parts.path.split("/")):
        return None  # a browser would resolve it to another address
    hostname = parts.hostname.rstrip(".")
    if origin == _origin(urlsplit(settings.SITES_URL)):
        prefix = f"/{site.pk}/"
        if parts.path != prefix.rstrip("/") and not parts.path.startswith(prefix):
            return None
        below = parts.path[len(prefix) :]
        return below if len(below) <= MAX_KEY_LENGTH else _digest(hostname, parts.path)
    if hostname in custom_domains(site):
        return _digest(hostname, parts.path or "/")
    return None


def is_http_url(value) -> bool:
    """An http or https URL of at most MAX_URL_LENGTH characters that any database stores."""
    if not isinstance(value, str) or len(value) > MAX_URL_LENGTH or "\x00" in value:
        return False
    try:
        _HTTP_URL(value)
    except ValidationError:
        return False
    return True


def custom_domains(site: Site) -> set[str]:
    """The site's custom domains as host names (entries that are not strings are ignored)."""
    return {
        domain.strip().rstrip(".").lower()
        for domain in site.custom_domains or []
        if isinstance(domain, str) and domain.strip()
    }


def _origin(parts) -> tuple:
    """Scheme, host and port (the scheme's default when not given) of a split URL."""
    port = parts.port or {"http": 80, "https": 443}.get(parts.scheme)
    return parts.scheme, (parts.hostname or "").rstrip("."), port


def _digest(hostname: str, path: str) -> str:
    return "url:" + hashlib.sha256(f"{hostname}{path}".encode()).hexdigest()[:40]
