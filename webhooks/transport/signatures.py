"""The webhook signature schemes, one per endpoint (its configuration's ``signature``):

- ``service`` (the default): the specification's ``X-Service-Signature: t=<unix>,v1=<hex>``,
  made by the SDK's signer (``docplatform_sdk.signing``);
- ``standard-webhooks`` (https://www.standardwebhooks.com): ``webhook-id`` (the eventId),
  ``webhook-timestamp`` and ``webhook-signature: v1,<base64 HMAC-SHA256 of
  "<id>.<timestamp>.<body>">``, one space-separated entry per current secret, which receivers
  verify with a Standard Webhooks library, *and* the ``X-Service-Signature`` of the same
  timestamp: the specification says every webhook request carries it, whatever else it
  carries, so a receiver built on the specification keeps verifying after a switch.

Both schemes key the HMAC with the same bytes, the stored secret's UTF-8 bytes, so an endpoint
switches scheme without a new secret (a rotation's overlap included). Only the secret's shown
form differs: as stored for ``service``; ``whsec_`` + standard base64 of those bytes for
``standard-webhooks``, which is how its libraries decode a secret back into the key.
"""

import base64
import hashlib
import hmac
import time

from docplatform_sdk import signing

SERVICE = "service"
STANDARD_WEBHOOKS = "standard-webhooks"
#: How Standard Webhooks libraries tell a secret (before its base64).
STANDARD_PREFIX = "whsec_"


def signature_scheme(configuration: dict) -> str:
    """The endpoint's scheme; ``service`` for a configuration from before there was a choice."""
    return configuration.get("signature") or SERVICE


def signature_headers(
    scheme: str, *, event_id: str, body: bytes, secrets: list[str], timestamp: int | None = None
) -> dict[str, str]:
    """The headers that sign ``body`` now (or at ``timestamp``) with each current secret."""
    timestamp = int(time.time() if timestamp is None else timestamp)
    service = {signing.HEADER: signing.sign(body, secrets, timestamp)}
    if scheme != STANDARD_WEBHOOKS:
        return service
    signed = f"{event_id}.{timestamp}.".encode() + body
    entries = [
        "v1,"
        + base64.b64encode(hmac.new(secret.encode(), signed, hashlib.sha256).digest()).decode()
        for secret in secrets
    ]
    if not entries:
        raise ValueError("sign with at least one secret")
    return {
        "webhook-id": event_id,
        "webhook-timestamp": str(timestamp),
        "webhook-signature": " ".join(entries),
        **service,
    }


#: The header that carries the signature, in each scheme.
SIGNATURE_HEADER = {SERVICE: signing.HEADER, STANDARD_WEBHOOKS: "webhook-signature"}


def signatures_sent(request_headers: dict) -> list[tuple[str, str]]:
    """(header, value) of each signature an attempt's request carried: ``X-Service-Signature``
    always (but for attempts logged before every request carried it), and ``webhook-signature``
    too when its endpoint was set to Standard Webhooks then (an endpoint may switch schemes
    between attempts); none: unsigned."""
    by_name = {name.lower(): (name, value) for name, value in request_headers.items()}
    return [
        by_name[header.lower()] for header in SIGNATURE_HEADER.values() if header.lower() in by_name
    ]


def secret_shown(configuration: dict, secret: str) -> str:
    """The stored ``secret`` as the endpoint's receiver takes it."""
    if signature_scheme(configuration) != STANDARD_WEBHOOKS:
        return secret
    return STANDARD_PREFIX + base64.b64encode(secret.encode()).decode()
