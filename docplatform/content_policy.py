"""The Content-Security-Policy headers (django-csp), built once for the responses that take
the settings' policy as it is.

django-csp builds both headers again for every response: it copies the policy's settings
(``dataclasses.asdict``), then joins them: 43 to 49 µs a response, on every page and API
call (``benchmarks/RESULTS.md``, "Issue 35, session 26"); 6 to 14 µs kept. A response whose view
changed nothing of the policy (no ``csp_update``, ``csp_replace`` or ``csp`` decorator) and
whose request used no nonce gets the same two strings each time: they are built at the
first such response and kept until the settings change (``setting_changed``: the tests'
``override_settings``). Every other response is django-csp's own.
"""

from functools import cache

from csp.constants import HEADER, HEADER_REPORT_ONLY
from csp.middleware import CheckableLazyObject, CSPMiddleware
from csp.utils import build_policy
from django.conf import settings
from django.core.signals import setting_changed
from django.dispatch import receiver

#: What a view sets on its response to change the policy (``csp.decorators``).
_CHANGES = tuple(
    f"_csp_{what}{suffix}" for what in ("config", "update", "replace") for suffix in ("", "_ro")
)
_SETTINGS = ("CONTENT_SECURITY_POLICY", "CONTENT_SECURITY_POLICY_REPORT_ONLY")


@cache
def _headers() -> tuple[tuple[str, str, str, tuple[str, ...]], ...]:
    """Each header the settings' policies make: its name, its value, the response attribute
    that exempts a response from it, and the path prefixes it is not sent for."""
    headers = []
    for name, setting, exempt, report_only in (
        (HEADER, _SETTINGS[0], "_csp_exempt", False),
        (HEADER_REPORT_ONLY, _SETTINGS[1], "_csp_exempt_ro", True),
    ):
        value = build_policy(report_only=report_only)
        if value:
            policy = getattr(settings, setting, None) or {}
            prefixes = tuple(policy.get("EXCLUDE_URL_PREFIXES", None) or ())
            headers.append((name, value, exempt, prefixes))
    return tuple(headers)


@receiver(setting_changed)
def _forget_headers(*, setting, **kwargs):
    if setting in _SETTINGS:
        _headers.cache_clear()


class ContentPolicyMiddleware(CSPMiddleware):
    def process_response(self, request, response):
        if getattr(request, "_csp_nonce", None) is not None or any(
            getattr(response, change, None) is not None for change in _CHANGES
        ):
            return super().process_response(request, response)
        if response.status_code in (404, 500) and settings.DEBUG:  # Django's debug pages
            return response
        path = request.path_info
        for name, value, exempt, prefixes in _headers():
            sent = name in response or getattr(response, exempt, False)
            if not sent and not path.startswith(prefixes):
                response[name] = value
        # As django-csp does: a nonce asked for after the header is written is an error.
        request.csp_nonce = CheckableLazyObject(self._csp_nonce_post_response)
        return response
