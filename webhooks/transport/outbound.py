"""Webhook deliveries' side of the one outbound guard (``docplatform_sdk.outbound``):
the networks, timeouts and connection pools come from the settings.

``WEBHOOK_ALLOWED_NETWORKS`` lifts the public-address rule for development and tests;
``WEBHOOK_CONNECT_TIMEOUT`` (3 s) and ``WEBHOOK_RESPONSE_TIMEOUT`` (10 s, an absolute deadline
for the whole attempt) bound each POST; each receiver's keep-alive pool keeps as many
connections as POSTs can be in flight (``WEBHOOK_SENDERS``).
"""

import functools
from dataclasses import dataclass

from django.conf import settings
from docplatform_sdk import outbound
from docplatform_sdk.addresses import parse_networks
from docplatform_sdk.outbound import SendError, Target, UnsafeURL

__all__ = ["Response", "SendError", "Target", "UnsafeURL", "allowed_networks", "check_url", "post"]


@dataclass(frozen=True)
class Response:
    status: int
    headers: dict
    body_start: bytes  # the first bytes of the (decoded) body, as many as were asked for


def allowed_networks():
    return parse_networks(settings.WEBHOOK_ALLOWED_NETWORKS)


def check_url(url: str) -> Target:
    """Resolve and check a webhook URL; raises UnsafeURL with a reason a person can act on."""
    return outbound.check_url(
        url, allowed_networks=allowed_networks(), allowed_by="WEBHOOK_ALLOWED_NETWORKS"
    )


@functools.cache
def _pools():
    """Keep-alive pools shared by the threads of a process (urllib3 directly: a POST costs a
    third of requests' CPU)."""
    return outbound.pool_manager(connections_per_host=settings.WEBHOOK_SENDERS)


def post(target: Target, *, body: bytes, headers: dict, keep: int) -> Response:
    """POST ``body`` to the checked target, reading the first ``keep`` bytes of the answer.
    Raises SendError."""
    answer = outbound.request(
        _pools(),
        target,
        method="POST",
        body=body,
        headers=headers,
        keep=keep,
        connect_timeout=settings.WEBHOOK_CONNECT_TIMEOUT,
        total_timeout=settings.WEBHOOK_RESPONSE_TIMEOUT,
    )
    return Response(status=answer.status, headers=dict(answer.headers), body_start=answer.body)
