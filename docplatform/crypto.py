"""Encryption at rest for secrets and credentials.

Values are encrypted with Fernet (AES-128-CBC + HMAC-SHA256, from ``cryptography``). The keys
are ``settings.ENCRYPTION_KEYS`` (newest first, so keys can be rotated); without any, one key
is derived from ``SECRET_KEY``, in development (``DEBUG``) only: ``key_from_setting`` is the
one rule for every key the platform may derive, and ``missing_keys`` what ``check --deploy``
reports.
"""

import base64
import functools
import json

from cryptography.fernet import Fernet, InvalidToken, MultiFernet
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.kdf.hkdf import HKDF
from django.conf import settings
from django.core import checks
from django.core.exceptions import ImproperlyConfigured
from django.db import models

#: Settings holding keys that are derived from SECRET_KEY in development only.
DERIVABLE_KEYS = {"ENCRYPTION_KEYS": "encrypts secrets and credentials at rest"}


def register_derivable_key(setting: str, purpose: str) -> None:
    """An app's key setting that ``check --deploy`` must find set (the runtime's, ...)."""
    DERIVABLE_KEYS[setting] = purpose


def key_from_setting(setting: str, value, derive):
    """``value`` when set; in development, ``derive()``; otherwise ImproperlyConfigured."""
    if value:
        return value
    if not settings.DEBUG:
        raise ImproperlyConfigured(
            f"{setting} is not set: it {DERIVABLE_KEYS.get(setting, 'is a key')}, and is "
            "derived from SECRET_KEY only in development (DEBUG=true)"
        )
    return derive()


@checks.register(checks.Tags.security, deploy=True)
def missing_keys(app_configs=None, **kwargs) -> list[checks.Error]:
    """Every key setting left to be derived from SECRET_KEY, by name."""
    return [
        checks.Error(
            f"{setting} is not set; it {purpose}. Outside development it is never derived "
            "from SECRET_KEY.",
            hint=f"Set {setting} in the environment.",
            id=f"docplatform.E{index:03d}",
        )
        for index, (setting, purpose) in enumerate(sorted(DERIVABLE_KEYS.items()), start=1)
        if not getattr(settings, setting, None)
    ]


@functools.cache
def _fernet(keys: tuple[str, ...], secret_key: str) -> MultiFernet:
    def derive():
        derived = HKDF(
            algorithm=hashes.SHA256(), length=32, salt=None, info=b"docplatform-encryption"
        ).derive(secret_key.encode())
        return (base64.urlsafe_b64encode(derived).decode(),)

    keys = key_from_setting("ENCRYPTION_KEYS", keys, derive)
    return MultiFernet([Fernet(key) for key in keys])


def fernet() -> MultiFernet:
    return _fernet(tuple(settings.ENCRYPTION_KEYS), settings.SECRET_KEY)


def encrypt_json(value) -> str:
    return fernet().encrypt(json.dumps(value, sort_keys=True).encode()).decode()


def decrypt_json(token: str):
    try:
        return json.loads(_plaintext(fernet(), token))
    except InvalidToken as exc:
        raise ValueError("encrypted value cannot be decrypted with the configured keys") from exc


@functools.lru_cache(maxsize=4096)
def _plaintext(keys: MultiFernet, token: str) -> bytes:
    """A token's plaintext, kept for the next read of the same row: every encryption makes
    a new token (a random IV and a timestamp), so a changed value is a new key here and
    nothing needs invalidating; new keys are a new ``keys``. A runtime call reads five
    encrypted fields (the installation's and its parent's credentials and API token, the
    version's secrets), each a Fernet decryption otherwise."""
    return keys.decrypt(token.encode())


class EncryptedJSONField(models.TextField):
    """A JSON value stored encrypted; the database only ever sees ciphertext."""

    description = "JSON encrypted at rest"

    def from_db_value(self, value, expression, connection):
        if value is None or value == "":
            return None
        return decrypt_json(value)

    def to_python(self, value):
        return value

    def get_prep_value(self, value):
        if value is None:
            return None
        return encrypt_json(value)

    def value_to_string(self, obj):
        # Serialization (dumpdata) must not leak the plain value either.
        return self.get_prep_value(self.value_from_object(obj))
