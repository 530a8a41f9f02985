"""The REST API's OpenAPI schema (``/api/schema/``) and its interactive docs (``/api/docs/``)."""

import threading

from csp.decorators import csp_update
from django.urls import path
from django.utils.translation import get_language
from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerSplitView
from rest_framework.response import Response


class SchemaView(SpectacularAPIView):
    """The schema, generated once per process for each API version and language: it changes
    only with the code, and generating it takes a second of CPU (1.1 MB; the API docs' page
    asks for it at every visit)."""

    _generated: dict = {}
    _lock = threading.Lock()

    def _get_schema_response(self, request):
        version = self.api_version or request.version or self._get_version_parameter(request)
        key = (version, get_language())
        with self._lock:
            if key not in self._generated:
                self._generated[key] = super()._get_schema_response(request).data
        filename = self._get_filename(request, version)
        return Response(
            data=self._generated[key],
            headers={"Content-Disposition": f'inline; filename="{filename}"'},
        )


urlpatterns = [
    path("schema/", SchemaView.as_view(), name="schema"),
    path(  # its script comes from its own URL (CSP); Swagger UI needs its inline styles
        "docs/",
        csp_update({"style-src": ["'unsafe-inline'"], "img-src": ["data:"]})(
            SpectacularSwaggerSplitView.as_view(url_name="schema")
        ),
        name="api-docs",
    ),
]
