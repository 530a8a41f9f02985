"""The benchmark's URLconf (``reader.py`` only, never the product's): the platform's URLs,
plus ``/bench/bare/``, a bare Django view returning a small HTML page through the same
middleware as the reader, and ``/bench/bare-user/``, the same once it has asked whether the
visitor is signed in (the session and user reads every signed-in page pays)."""

from django.http import HttpResponse
from django.urls import path

from docplatform.urls import handler404, handler500
from docplatform.urls import urlpatterns as platform_urlpatterns

BODY = (
    b'<!doctype html>\n<html lang="en"><head><meta charset="utf-8"><title>Bench</title>'
    b"</head><body><h1>Bench</h1><p>Hello, bench!</p></body></html>\n"
)


def bare(request):
    return HttpResponse(BODY, content_type="text/html; charset=utf-8")


def bare_user(request):
    if not request.user.is_authenticated:
        return HttpResponse(b"not signed in", status=403)
    return HttpResponse(BODY, content_type="text/html; charset=utf-8")


urlpatterns = [
    path("bench/bare/", bare),
    path("bench/bare-user/", bare_user),
    *platform_urlpatterns,
]
__all__ = ["handler404", "handler500", "urlpatterns"]
