"""``GET /metrics``: the Prometheus metrics, on the platform's host, for a scraper holding
``METRICS_TOKEN`` (``Authorization: Bearer <token>``). Anyone else, and everyone while the
token is unset, gets the 404 of a path that does not exist."""

from django.http import Http404, HttpResponse
from django.views.decorators.http import require_GET
from prometheus_client import CONTENT_TYPE_LATEST

from .metrics import scrape, scraper_authorized


@require_GET
def metrics(request):
    if not scraper_authorized(request.headers.get("Authorization", "")):
        raise Http404
    response = HttpResponse(scrape(), content_type=CONTENT_TYPE_LATEST)
    response["Cache-Control"] = "no-store"
    return response
