"""The benchmark's URLconf (``public_endpoint.py`` only, never the product's): the platform's
URLs, plus ``/bench/bare/``, a bare Django view returning the body the integration returns."""

from django.http import HttpResponse
from django.urls import path

from docplatform.urls import handler404, handler500
from docplatform.urls import urlpatterns as platform_urlpatterns

BODY = b'{"message": "Hello, bench!"}'


def bare(request):
    return HttpResponse(BODY, content_type="application/json")


urlpatterns = [path("bench/bare/", bare), *platform_urlpatterns]
__all__ = ["handler404", "handler500", "urlpatterns"]
