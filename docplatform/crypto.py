"""Encryption at rest for secrets and credentials.

Values are encrypted with Fernet (AES-128-CBC + HMAC-SHA256, from ``cryptography``). The keys
are ``settings.ENCRYPTION_KEYS`` (newest first, so keys can be rotated); without any, one key
is derived from ``SECRET_KEY``.
"""

import base64
import functools
import json

from cryptography.fernet import Fernet, InvalidToken, MultiFernet
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.kdf.hkdf import HKDF
from django.conf import settings
from django.db import models


@functools.cache
def _fernet(keys: tuple[str, ...], secret_key: str) -> MultiFernet:
    if not keys:
        derived = HKDF(
            algorithm=hashes.SHA256(), length=32, salt=None, info=b"docplatform-encryption"
        ).derive(secret_key.encode())
        keys = (base64.urlsafe_b64encode(derived).decode(),)
    return MultiFernet([Fernet(key) for key in keys])


def fernet() -> MultiFernet:
    return _fernet(tuple(settings.ENCRYPTION_KEYS), settings.SECRET_KEY)


def encrypt_json(value) -> str:
    return fernet().encrypt(json.dumps(value, sort_keys=True).encode()).decode()


def decrypt_json(token: str):
    try:
        return json.loads(fernet().decrypt(token.encode()))
    except InvalidToken as exc:
        raise ValueError("encrypted value cannot be decrypted with the configured keys") from exc


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
