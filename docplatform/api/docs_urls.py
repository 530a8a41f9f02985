"""The REST API's OpenAPI schema (``/api/schema/``) and its interactive docs (``/api/docs/``)."""

from csp.decorators import csp_update
from django.urls import path
from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerSplitView

urlpatterns = [
    path("schema/", SpectacularAPIView.as_view(), name="schema"),
    path(  # its script comes from its own URL (CSP); Swagger UI needs its inline styles
        "docs/",
        csp_update({"style-src": ["'unsafe-inline'"], "img-src": ["data:"]})(
            SpectacularSwaggerSplitView.as_view(url_name="schema")
        ),
        name="api-docs",
    ),
]
