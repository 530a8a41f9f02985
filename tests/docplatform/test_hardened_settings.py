"""Hardened defaults: HTTPS settings follow PLATFORM_URL, every platform page carries the
Content-Security-Policy, and no template holds inline script."""

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from django.test import override_settings

REPO = Path(__file__).resolve().parents[2]
HTTPS_SETTINGS = [
    "SESSION_COOKIE_SECURE",
    "CSRF_COOKIE_SECURE",
    "SECURE_SSL_REDIRECT",
    "SECURE_HSTS_SECONDS",
    "SECURE_PROXY_SSL_HEADER",
]


#: What production sets besides (DEBUG off refuses the development SECRET_KEY).
BASE = {
    "DJANGO_SETTINGS_MODULE": "docplatform.settings",
    "SECRET_KEY": "a-production-key-of-enough-length-0123456789abcdef",
}


def settings_for(**environment) -> dict:
    """The settings a process started with ``environment`` reads (as production starts)."""
    env = {**os.environ, **BASE, **environment}
    code = (
        "import django, json; django.setup(); from django.conf import settings; "
        f"print(json.dumps({{name: getattr(settings, name) for name in {HTTPS_SETTINGS!r}}}))"
    )
    done = subprocess.run(
        [sys.executable, "-c", code],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


PRODUCTION = {
    "PLATFORM_URL": "https://docs.example.com",
    "INTEGRATIONS_URL": "https://integrations.example.net",
    "ALLOWED_HOSTS": "docs.example.com,integrations.example.net",
}


@pytest.mark.slow
def test_an_https_platform_url_turns_on_secure_cookies_redirect_and_hsts():
    assert settings_for(**PRODUCTION) == {
        "SESSION_COOKIE_SECURE": True,
        "CSRF_COOKIE_SECURE": True,
        "SECURE_SSL_REDIRECT": True,
        "SECURE_HSTS_SECONDS": 365 * 24 * 3600,
        "SECURE_PROXY_SSL_HEADER": None,
    }


@pytest.mark.slow
def test_an_http_platform_url_leaves_them_off():
    assert settings_for(PLATFORM_URL="http://127.0.0.1:8000") == {
        "SESSION_COOKIE_SECURE": False,
        "CSRF_COOKIE_SECURE": False,
        "SECURE_SSL_REDIRECT": False,
        "SECURE_HSTS_SECONDS": 0,
        "SECURE_PROXY_SSL_HEADER": None,
    }


@pytest.mark.slow
def test_hsts_duration_and_a_tls_terminating_proxy_are_settings():
    read = settings_for(**PRODUCTION, SECURE_HSTS_SECONDS="600", TRUSTED_PROXY_COUNT="1")
    assert read["SECURE_HSTS_SECONDS"] == 600
    assert read["SECURE_PROXY_SSL_HEADER"] == ["HTTP_X_FORWARDED_PROTO", "https"]


@pytest.mark.parametrize("name", ["LOGIN_FAILURE_LIMIT", "LOGIN_LOCKOUT_MINUTES"])
def test_a_login_throttle_setting_must_be_positive(name):
    env = {**os.environ, **BASE, name: "0"}
    done = subprocess.run(
        [sys.executable, "-c", "import django; django.setup()"],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode != 0
    assert f"{name} must be a number above 0, not '0'" in done.stderr


@pytest.mark.django_db
@override_settings(SECURE_SSL_REDIRECT=True, SECURE_HSTS_SECONDS=3600)
def test_on_https_plain_http_is_redirected_and_https_answers_carry_hsts(client):
    redirected = client.get("/marketplace/login/")
    assert redirected.status_code == 301
    assert redirected["Location"] == "https://testserver/marketplace/login/"
    secure = client.get("/marketplace/login/", secure=True)
    assert secure.status_code == 200
    assert secure["Strict-Transport-Security"] == "max-age=3600"


@pytest.mark.django_db
@pytest.mark.parametrize("path", ["/marketplace/login/", "/admin/login/", "/api/v1/me/"])
def test_platform_pages_carry_the_content_security_policy(client, path):
    policy = client.get(path)["Content-Security-Policy"]
    directives = dict(part.strip().split(" ", 1) for part in policy.split(";"))
    assert directives["script-src"] == "'self'"
    assert directives["style-src"] == "'self'"
    assert directives["object-src"] == "'none'"
    assert directives["frame-ancestors"] == "'none'"
    assert "unsafe-inline" not in policy and "unsafe-eval" not in policy


@pytest.mark.django_db
def test_the_api_docs_load_their_script_from_a_file(client, admin_user):
    client.force_login(admin_user)
    page = client.get("/api/docs/")
    html = page.content.decode()
    assert "script-src 'self'" in page["Content-Security-Policy"]
    assert re.findall(r"<script>", html) == []
    script = client.get("/api/docs/?script=")
    assert script["Content-Type"].startswith("application/javascript")
    assert "SwaggerUIBundle" in script.content.decode()


INLINE_SCRIPT = re.compile(r"<script(?![^>]*\bsrc=)[^>]*>", re.IGNORECASE)
INLINE_HANDLER = re.compile(r"\son[a-z]+\s*=", re.IGNORECASE)
INLINE_STYLE = re.compile(r"<style|\sstyle\s*=", re.IGNORECASE)


@pytest.mark.parametrize(
    "template", sorted((REPO / "templates").rglob("*.html")), ids=lambda path: path.name
)
def test_templates_hold_no_inline_script_or_style(template):
    text = template.read_text()
    assert not INLINE_SCRIPT.search(text)
    assert not INLINE_HANDLER.search(text)
    assert not INLINE_STYLE.search(text)
