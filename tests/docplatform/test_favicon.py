"""The platform's pages and the published sites answer a browser's /favicon.ico with the
platform's icon, not a 404. The integrations origin stays the integrations' own (only their
endpoints resolve there)."""

from urllib.parse import urlsplit

import pytest
from django.conf import settings
from django.test import Client


@pytest.mark.parametrize("origin", ["PLATFORM_URL", "SITES_URL"])
def test_each_origin_serves_the_icon(origin):
    host = urlsplit(getattr(settings, origin)).netloc
    answer = Client(HTTP_HOST=host).get("/favicon.ico")
    assert answer.status_code == 200
    assert answer["Content-Type"] == "image/x-icon"
    icon = b"".join(answer.streaming_content)
    assert icon[:4] == b"\0\0\1\0"  # an ICO file's header: reserved, type 1 (icon)
    assert icon[22:26] == b"\x89PNG"  # its one image, a PNG


def test_the_integrations_origin_keeps_its_own_paths():
    host = urlsplit(settings.INTEGRATIONS_URL).netloc
    assert Client(HTTP_HOST=host).get("/favicon.ico").status_code == 404
