"""The receiver kit: verify a webhook request from the platform. Pure Python, no Django.

    from docplatform_sdk.receiver import SignatureError, verify_signature

    try:
        verify_signature(raw_body, request.headers.get("X-Service-Signature"), SECRET)
    except SignatureError as error:
        return 401, {"error": str(error)}

``raw_body`` must be the body exactly as received (bytes), not a re-serialized form.
"""

from .signing import (
    DEFAULT_TOLERANCE,
    HEADER,
    MalformedSignature,
    MissingSignature,
    SignatureError,
    SignatureMismatch,
    StaleSignature,
    verify,
)

__all__ = [
    "HEADER",
    "MalformedSignature",
    "MissingSignature",
    "SignatureError",
    "SignatureMismatch",
    "StaleSignature",
    "verify_signature",
]


def verify_signature(
    raw_body: bytes, header: str | None, secret: str, tolerance: int | None = DEFAULT_TOLERANCE
) -> int:
    """Accept the request when any ``v1`` entry of ``header`` matches (constant-time compare)
    and ``t`` is within ``tolerance`` seconds (None: no age check). Returns ``t``.

    Raises MissingSignature, MalformedSignature, StaleSignature or SignatureMismatch, all
    SignatureError.
    """
    return verify(raw_body, header, secret, tolerance=tolerance)
