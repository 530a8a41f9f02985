"""Fetching an OpenAPI document from a URL, through the one outbound guard webhook deliveries
use (``docplatform_sdk.outbound``): http or https, every address the host resolves to public
unless in ``OPENAPI_ALLOWED_NETWORKS``, the connection made to the address checked, no
redirect followed, at most ``OPENAPI_MAX_BYTES`` read within ``OPENAPI_FETCH_TIMEOUT``."""

import functools

from django.conf import settings
from django.core.exceptions import ValidationError
from docplatform_sdk import outbound
from docplatform_sdk.addresses import parse_networks

ACCEPT = "application/json, application/yaml, application/x-yaml, text/yaml, text/plain, */*"


@functools.cache
def _pools():
    return outbound.pool_manager()


def fetch_document(url: str, *, field: str = "url") -> str:
    """The text at ``url``; a ValidationError on ``field`` says why there is none."""
    try:
        target = outbound.check_url(
            url,
            allowed_networks=parse_networks(settings.OPENAPI_ALLOWED_NETWORKS),
            allowed_by="OPENAPI_ALLOWED_NETWORKS",
        )
    except outbound.UnsafeURL as refused:
        raise ValidationError({field: f"This URL may not be fetched: {refused}."}) from None
    limit = settings.OPENAPI_MAX_BYTES
    try:
        answer = outbound.request(
            _pools(),
            target,
            method="GET",
            headers={"Accept": ACCEPT, "User-Agent": "docplatform-openapi"},
            keep=limit + 1,
            connect_timeout=settings.OPENAPI_FETCH_CONNECT_TIMEOUT,
            total_timeout=settings.OPENAPI_FETCH_TIMEOUT,
        )
    except outbound.SendError as failed:
        raise ValidationError({field: f"The URL could not be fetched: {failed}."}) from None
    if 300 <= answer.status < 400:
        message = (
            f"The URL answered {answer.status}, a redirect; give the address it redirects to "
            "(redirects are not followed)."
        )
        raise ValidationError({field: message})
    if not 200 <= answer.status < 300:
        raise ValidationError({field: f"The URL answered {answer.status}, not a document."})
    if len(answer.body) > limit or answer.truncated:
        raise ValidationError({field: f"The document is larger than {limit:,} bytes."})
    try:
        return answer.body.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise ValidationError({field: "The document is not UTF-8 text."}) from None
