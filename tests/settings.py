"""Test settings: the project's settings with what tests need to be fast and isolated.

The database and the broker still come from DATABASE_URL and CELERY_BROKER_URL, so CI runs
the suite on PostgreSQL and Redis and a fresh machine on SQLite and the file-system broker.
"""

import tempfile
from pathlib import Path

from docplatform.settings import *  # noqa: F403
from docplatform.settings import CELERY_BROKER_URL

PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]

# A broker folder of the test run's own, so a running `make run` never sees test messages.
if CELERY_BROKER_URL.startswith("filesystem://"):
    _queue = Path(tempfile.mkdtemp(prefix="docplatform-test-broker-"))
    CELERY_BROKER_TRANSPORT_OPTIONS = {
        "data_folder_in": str(_queue),
        "data_folder_out": str(_queue),
        "store_processed": False,
    }
