"""The platform's settings with the benchmark's URLconf (``reader_urls``)."""

from docplatform.settings import *  # noqa: F403

ROOT_URLCONF = "reader_urls"
