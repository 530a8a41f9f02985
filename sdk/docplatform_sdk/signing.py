"""The one request signer of the platform: webhook deliveries and runtime envelopes.

``X-Service-Signature: t=<unix timestamp>,v1=<hex HMAC-SHA256 of "<t>.<raw body>">``. During
a secret rotation a header carries one ``v1=`` entry per active secret; a receiver accepts
the request when any entry matches one of its secrets. Pure Python: the runtime host and
receivers use it without Django.
"""

import hashlib
import hmac
import time
from collections.abc import Iterable

HEADER = "X-Service-Signature"
SCHEME = "v1"
DEFAULT_TOLERANCE = 300


class SignatureError(Exception):
    """The signature is invalid; the subclass says why."""


class MissingSignature(SignatureError):
    pass


class MalformedSignature(SignatureError):
    pass


class StaleSignature(SignatureError):
    pass


class SignatureMismatch(SignatureError):
    pass


def _key(secret: str | bytes) -> bytes:
    return secret if isinstance(secret, bytes) else secret.encode()


def compute(raw_body: bytes, timestamp: int, secret: str | bytes) -> str:
    message = str(timestamp).encode() + b"." + raw_body
    return hmac.new(_key(secret), message, hashlib.sha256).hexdigest()


def sign(raw_body: bytes, secrets: str | bytes | Iterable[str | bytes], timestamp=None) -> str:
    """The header value for ``raw_body``, signed now (or at ``timestamp``) with each secret."""
    if isinstance(secrets, str | bytes):
        secrets = [secrets]
    timestamp = int(time.time() if timestamp is None else timestamp)
    entries = [f"{SCHEME}={compute(raw_body, timestamp, secret)}" for secret in secrets]
    if not entries:
        raise ValueError("sign with at least one secret")
    return ",".join([f"t={timestamp}", *entries])


def parse(header: str | None) -> tuple[int, list[str]]:
    """The timestamp and the ``v1`` signatures of a header value."""
    if header is None or not header.strip():
        raise MissingSignature(f"the {HEADER} header is missing")
    timestamp, signatures = None, []
    for part in header.split(","):
        key, sep, value = part.strip().partition("=")
        if not sep:
            raise MalformedSignature(f"{HEADER}: '{part.strip()}' is not key=value")
        if key == "t":
            if not value.isdigit():
                raise MalformedSignature(f"{HEADER}: t must be a Unix timestamp")
            timestamp = int(value)
        elif key == SCHEME:
            signatures.append(value.strip())
    if timestamp is None:
        raise MalformedSignature(f"{HEADER}: the t= part is missing")
    if not signatures:
        raise MalformedSignature(f"{HEADER}: no {SCHEME}= signature")
    return timestamp, signatures


def verify(
    raw_body: bytes,
    header: str | None,
    secrets: str | bytes | Iterable[str | bytes],
    *,
    tolerance: int | None = DEFAULT_TOLERANCE,
    now: float | None = None,
) -> int:
    """Check ``header`` against ``raw_body`` as received; returns the signed timestamp.

    Raises MissingSignature, MalformedSignature, StaleSignature (``t`` further than
    ``tolerance`` seconds from now; None disables the check) or SignatureMismatch. Digests
    are compared in constant time.
    """
    timestamp, signatures = parse(header)
    if tolerance is not None:
        current = time.time() if now is None else now
        if abs(current - timestamp) > tolerance:
            raise StaleSignature(
                f"{HEADER}: the timestamp is {int(current - timestamp)} s old "
                f"(tolerance {tolerance} s)"
            )
    if isinstance(secrets, str | bytes):
        secrets = [secrets]
    expected = [compute(raw_body, timestamp, secret) for secret in secrets]
    matched = False
    for signature in signatures:
        for digest in expected:
            matched |= hmac.compare_digest(signature.encode(), digest.encode())
    if not matched:
        raise SignatureMismatch(f"{HEADER}: no signature matches the body")
    return timestamp
