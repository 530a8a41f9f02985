"""The webhook signature schemes, one per endpoint (its configuration's ``signature``):

- ``service`` (the default): the specification's ``X-Service-Signature: t=<unix>,v1=<hex>``,
  made by the SDK's signer (``docplatform_sdk.signing``);
- ``standard-webhooks`` (https://www.standardwebhooks.com): ``webhook-id`` (the eventId),
  ``webhook-timestamp`` and ``webhook-signature: v1,<base64 HMAC-SHA256 of
  "<id>.<timestamp>.<body>">``, one space-separated entry per current secret. Receivers verify
  it with a Standard Webhooks library; it carries no ``X-Service-Signature``.

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
    if scheme != STANDARD_WEBHOOKS:
        return {signing.HEADER: signing.sign(body, secrets, timestamp)}
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
    }


#: The header that carries the signature, in each scheme.
SIGNATURE_HEADER = {SERVICE: signing.HEADER, STANDARD_WEBHOOKS: "webhook-signature"}


def signature_sent(request_headers: dict) -> tuple[str, str] | None:
    """(header, value) of the signature an attempt's request carried, whichever the scheme
    it was signed with (an endpoint may switch schemes between attempts); None: unsigned."""
    by_name = {name.lower(): (name, value) for name, value in request_headers.items()}
    for header in SIGNATURE_HEADER.values():
        if header.lower() in by_name:
            return by_name[header.lower()]
    return None


def secret_shown(configuration: dict, secret: str) -> str:
    """The stored ``secret`` as the endpoint's receiver takes it."""
    if signature_scheme(configuration) != STANDARD_WEBHOOKS:
        return secret
    return STANDARD_PREFIX + base64.b64encode(secret.encode()).decode()
