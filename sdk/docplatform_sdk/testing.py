"""Helpers for testing integration code on your own machine, outside the runtime.

``Context(environment, fetch=direct_fetch)`` gives handlers a ``context.fetch`` (and so a
``context.api``) that sends requests straight from this process. Inside the runtime,
``context.fetch`` goes through the runtime host under the platform's outbound rules instead
(public hosts only, ``network.fetch``, no redirects, 10 s), so test against those rules too.
"""

import urllib.error
import urllib.request

from .context import FetchError
from .http_messages import Response


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args, **kwargs):
        return None  # a 3xx comes back as it is, as in the runtime


_opener = urllib.request.build_opener(_NoRedirect, urllib.request.ProxyHandler({}))


def direct_fetch(url, method="GET", headers=None, body=None, timeout=10) -> Response:
    """``context.fetch`` made here and now (any status comes back as a Response)."""
    if isinstance(body, str):
        body = body.encode()
    if not url.startswith(("http://", "https://")):
        raise FetchError(f"only http and https URLs may be fetched, not {url!r}")
    request = urllib.request.Request(  # noqa: S310 - an http(s) URL, checked above
        url, data=body, headers=dict(headers or {}), method=method
    )
    try:
        with _opener.open(request, timeout=timeout) as answer:
            return Response(answer.status, dict(answer.headers.items()), answer.read())
    except urllib.error.HTTPError as answer:
        return Response(answer.code, dict(answer.headers.items()), answer.read())
    except (urllib.error.URLError, OSError) as error:
        raise FetchError(str(getattr(error, "reason", error))) from None
