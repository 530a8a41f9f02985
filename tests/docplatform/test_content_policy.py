"""The Content-Security-Policy headers built once: every response gets what django-csp's own
middleware would give it, whatever the view changed, the settings say or the page asked
(a nonce)."""

import pytest
from csp.constants import NONCE
from csp.decorators import csp_exempt, csp_replace, csp_update
from csp.middleware import CSPMiddleware
from django.http import HttpResponse
from django.test import RequestFactory, override_settings

from docplatform.content_policy import ContentPolicyMiddleware

POLICY = "Content-Security-Policy"
REPORTED = "Content-Security-Policy-Report-Only"


def plain(request):
    return HttpResponse("plain")


def with_nonce(request):
    return HttpResponse(f"<script nonce='{request.csp_nonce}'></script>")


@csp_update({"img-src": ["https:"]})
def updated(request):
    return HttpResponse("updated")


@csp_replace({"script-src": ["'self'", "https://cdn.example"]})
def replaced(request):
    return HttpResponse("replaced")


@csp_exempt()
def exempt(request):
    return HttpResponse("exempt")


def directives(value: str | None) -> dict | None:
    """A header's directives, in any order (django-csp's order follows a set's)."""
    if value is None:
        return None
    return dict([*part.strip().split(" ", 1), ""][:2] for part in value.split(";"))


def headers(middleware_class, view, path="/page/"):
    request = RequestFactory().get(path)
    middleware = middleware_class(view)
    response = middleware(request)
    return {name: directives(response.headers.get(name)) for name in (POLICY, REPORTED)}


@pytest.mark.parametrize("view", [plain, with_nonce, updated, replaced, exempt])
def test_each_response_gets_django_csps_headers(view):
    built_once = headers(ContentPolicyMiddleware, view)
    assert built_once == headers(CSPMiddleware, view)
    assert built_once == headers(ContentPolicyMiddleware, view)  # the kept headers again
    if view is exempt:
        assert built_once[POLICY] is None
    else:
        assert built_once[POLICY]["object-src"] == "'none'"


@override_settings(CONTENT_SECURITY_POLICY={"DIRECTIVES": {"script-src": ["'self'", NONCE]}})
def test_a_nonce_asked_for_is_in_the_header_and_differs_each_time():
    first, second = (headers(ContentPolicyMiddleware, with_nonce) for _ in range(2))
    assert first[POLICY]["script-src"].startswith("'self' 'nonce-")
    assert first[POLICY]["script-src"] != second[POLICY]["script-src"]
    assert headers(ContentPolicyMiddleware, plain)[POLICY]["script-src"] == "'self'"


def test_changed_settings_are_taken_at_once():
    assert headers(ContentPolicyMiddleware, plain)[REPORTED] is None
    changed = {
        "CONTENT_SECURITY_POLICY": {
            "DIRECTIVES": {"default-src": ["'none'"]},
            "EXCLUDE_URL_PREFIXES": ["/excluded/"],
        },
        "CONTENT_SECURITY_POLICY_REPORT_ONLY": {"DIRECTIVES": {"img-src": ["'self'"]}},
    }
    with override_settings(**changed):
        taken = headers(ContentPolicyMiddleware, plain)
        assert taken == headers(CSPMiddleware, plain)
        assert taken[POLICY] == {"default-src": "'none'"}
        assert taken[REPORTED]["img-src"] == "'self'"
        excluded = headers(ContentPolicyMiddleware, plain, path="/excluded/page/")
        assert excluded[POLICY] is None and excluded[REPORTED] is not None
    assert headers(ContentPolicyMiddleware, plain) == headers(CSPMiddleware, plain)
    assert headers(ContentPolicyMiddleware, plain)[POLICY]["default-src"] == "'self'"
