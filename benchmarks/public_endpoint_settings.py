"""The platform's settings with the benchmark's URLconf (``public_endpoint_urls``)."""

from docplatform.settings import *  # noqa: F403

ROOT_URLCONF = "public_endpoint_urls"
