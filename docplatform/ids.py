"""Public identifiers: short random strings, like the ids that manifests and payloads carry."""

import secrets
import string

ALPHABET = string.ascii_letters + string.digits
ID_LENGTH = 20


def new_id() -> str:
    return "".join(secrets.choice(ALPHABET) for _ in range(ID_LENGTH))
