"""The integrations origin (DESIGN.md, "Trust boundaries" 3): public endpoints are served on
``INTEGRATIONS_URL``'s host only, and nothing else is; no session, CSRF or authentication
middleware touches requests there; production refuses an integrations host that is the
platform's, or a parent or child domain of it. The browser's view is in
tests/marketplace/test_integrations_origin_browser.py."""

import os
import subprocess
import sys
from pathlib import Path

import pytest
from cryptography.fernet import Fernet
from django.conf import settings as django_settings

from integrations.environment import (
    environment_for,
    installation_public_endpoint,
    integration_public_endpoint,
)
from integrations.models import Integration
from integrations.operators import OPERATOR
from integrations.services.installations import installation_create, installation_pause
from tests.factories import IntegrationFactory

REPO = Path(__file__).resolve().parents[2]


def integrations_host() -> str:
    return django_settings.INTEGRATIONS_URL.split("://", 1)[1]


@pytest.fixture
def installation(organization, org_admin):
    integration = IntegrationFactory(
        name="greeter", organization=organization, visibility=Integration.Visibility.PRIVATE
    )
    return installation_create(user=org_admin, integration=integration, organization=organization)


def test_public_endpoints_are_urls_on_the_integrations_origin(installation, settings):
    settings.INTEGRATIONS_URL = "https://integrations.example-content.net"
    settings.PLATFORM_URL = "https://docs.example.com"
    assert installation_public_endpoint(installation) == (
        f"https://integrations.example-content.net/installations/{installation.pk}"
    )
    assert integration_public_endpoint(installation.integration) == (
        "https://integrations.example-content.net/integrations/greeter"
    )
    environment = environment_for(installation.integration.latest_version, installation)
    assert environment["integration"]["urls"]["publicEndpoint"] == (
        "https://integrations.example-content.net/integrations/greeter"
    )
    assert environment["installation"]["urls"]["publicEndpoint"] == (
        f"https://integrations.example-content.net/installations/{installation.pk}"
    )
    assert environment["apiEndpoint"] == "https://docs.example.com/api/v1"


@pytest.mark.django_db
@pytest.mark.parametrize("host", ["testserver", "localhost", "localhost:8000"])
def test_the_platform_host_does_not_serve_endpoints(client, installation, host):
    installation_pause(user=OPERATOR, installation=installation)  # answered 503 where the view runs
    for path in (
        f"/installations/{installation.pk}/",
        f"/installations/{installation.pk}/oauth",
        "/integrations/greeter/",
        f"/endpoints/installations/{installation.pk}/",
    ):
        assert client.get(path, HTTP_HOST=host).status_code == 404, path


@pytest.mark.django_db
@pytest.mark.parametrize(
    "path",
    [
        "/",
        "/marketplace/",
        "/marketplace/login/",
        "/admin/",
        "/admin/login/",
        "/api/v1/me/",
        "/api/schema/",
        "/static/marketplace/marketplace.css",
        "/installations/",
        "/integrations/",
    ],
)
def test_the_integrations_host_serves_nothing_else(client, admin_user, path):
    client.force_login(admin_user)  # a platform session changes nothing there
    response = client.get(path, HTTP_HOST=integrations_host())
    assert response.status_code == 404
    assert response.json() == {
        "error": "not_found",
        "message": "only integration endpoints are served on this host",
    }
    assert "Set-Cookie" not in response.headers


@pytest.mark.django_db
def test_the_integrations_host_serves_the_endpoint_views(client, installation):
    host = integrations_host()
    missing = client.get("/installations/nosuchinstallation/x", HTTP_HOST=host)
    assert (missing.status_code, missing.json()["message"]) == (404, "no such installation")
    unknown = client.get("/integrations/no-such-thing/", HTTP_HOST=host)
    assert unknown.json()["message"] == "no such integration endpoint"
    installation_pause(user=OPERATOR, installation=installation)
    paused = client.get(f"/installations/{installation.pk}/hello?x=1", HTTP_HOST=host)
    assert (paused.status_code, paused.json()["error"]) == (503, "installation_paused")


@pytest.mark.django_db
def test_no_session_csrf_or_authentication_runs_on_the_integrations_host(
    client, org_admin, installation
):
    installation_pause(user=org_admin, installation=installation)
    client.get("/marketplace/login/")  # the platform sets its CSRF cookie
    client.force_login(org_admin)
    assert {"sessionid", "csrftoken"} <= set(client.cookies)
    checked = type(client)(enforce_csrf_checks=True)
    checked.cookies = client.cookies

    # A POST without any CSRF token reaches the view: no CSRF middleware runs there.
    response = checked.post(
        f"/installations/{installation.pk}/hook",
        data=b'{"a": 1}',
        content_type="application/json",
        HTTP_HOST=integrations_host(),
    )
    assert response.status_code == 503
    request = response.wsgi_request
    assert not hasattr(request, "session") and not hasattr(request, "user")
    assert not hasattr(request, "_messages") and "CSRF_COOKIE" not in request.META
    assert "Set-Cookie" not in response.headers and "Vary" not in response.headers

    # The same POST on the platform's host is refused by its CSRF check.
    platform = checked.post("/marketplace/logout/", HTTP_HOST="localhost")
    assert platform.status_code == 403


def test_the_django_cookies_stay_host_only():
    assert django_settings.SESSION_COOKIE_DOMAIN is None
    assert django_settings.CSRF_COOKIE_DOMAIN is None
    assert django_settings.LANGUAGE_COOKIE_DOMAIN is None
    assert django_settings.MIDDLEWARE[0] == "integrations.middleware.IntegrationsOriginMiddleware"


# --- Start-up checks ------------------------------------------------------------------------


def load_settings(**environment) -> subprocess.CompletedProcess:
    env = {
        key: value
        for key, value in os.environ.items()
        if key not in ("DEBUG", "PLATFORM_URL", "INTEGRATIONS_URL", "SITES_URL", "ALLOWED_HOSTS")
    }
    env.update(
        DJANGO_SETTINGS_MODULE="docplatform.settings",
        SECRET_KEY="a-production-secret-key-" + "x" * 40,
        RUNTIME_SIGNING_KEY="a-production-signing-key",
        ENCRYPTION_KEYS=Fernet.generate_key().decode(),
        **environment,
    )
    code = "import django; django.setup(); from django.conf import settings; "
    code += "print(settings.INTEGRATIONS_URL, ' '.join(settings.ALLOWED_HOSTS))"
    return subprocess.run(
        [sys.executable, "-c", code],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )


@pytest.mark.parametrize(
    ("platform", "integrations"),
    [
        ("https://docs.example.com", "https://docs.example.com"),
        ("https://docs.example.com", "https://docs.example.com:8443"),
        ("https://docs.example.com", "https://DOCS.example.com."),
        ("https://docs.example.com", "https://integrations.docs.example.com"),
        ("https://docs.example.com", "https://example.com"),
        ("https://example.com", "https://a.b.example.com"),
    ],
)
def test_production_refuses_an_integrations_host_of_the_platforms_site(platform, integrations):
    done = load_settings(PLATFORM_URL=platform, INTEGRATIONS_URL=integrations)
    assert done.returncode != 0
    assert "ImproperlyConfigured: INTEGRATIONS_URL (" in done.stderr
    assert "must be on another domain than PLATFORM_URL" in done.stderr


@pytest.mark.parametrize(
    "url", ["integrations.example.net", "ftp://x.example.net", "https://x.example.net/endpoints"]
)
def test_an_integrations_url_that_is_not_an_origin_is_refused(url):
    done = load_settings(INTEGRATIONS_URL=url)
    assert done.returncode != 0
    assert f"ImproperlyConfigured: INTEGRATIONS_URL must be http(s)://host[:port], not '{url}'" in (
        done.stderr
    )


@pytest.mark.slow
def test_separate_domains_start_and_every_host_is_allowed():
    done = load_settings(
        PLATFORM_URL="https://docs.example.com",
        INTEGRATIONS_URL="https://docs-integrations.example.net/",
        SITES_URL="https://docs-sites.example.org",
        ALLOWED_HOSTS="docs.example.com",
    )
    assert done.returncode == 0, done.stderr
    url, *hosts = done.stdout.split()
    assert url == "https://docs-integrations.example.net"
    assert hosts == ["docs.example.com", "docs-integrations.example.net", "docs-sites.example.org"]


@pytest.mark.parametrize(
    "sites_url",
    [
        "https://docs.example.com",  # the platform's host
        "https://docs-integrations.example.net",  # the integrations'
        "https://sites.docs.example.com",  # a child domain of the platform's
    ],
)
def test_the_sites_origin_must_be_a_domain_of_its_own(sites_url):
    refused = load_settings(
        PLATFORM_URL="https://docs.example.com",
        INTEGRATIONS_URL="https://docs-integrations.example.net",
        SITES_URL=sites_url,
    )
    assert refused.returncode != 0
    assert f"ImproperlyConfigured: SITES_URL ({sites_url}) must be on another domain" in (
        refused.stderr
    )


@pytest.mark.slow
def test_development_allows_a_child_domain_but_never_the_same_host():
    child = load_settings(
        DEBUG="1", PLATFORM_URL="http://localhost:8000", INTEGRATIONS_URL="http://a.localhost:8000"
    )
    assert child.returncode == 0, child.stderr
    same = load_settings(DEBUG="1", INTEGRATIONS_URL="http://127.0.0.1:9000")
    assert "ImproperlyConfigured: INTEGRATIONS_URL (" in same.stderr


@pytest.mark.slow
def test_the_development_defaults_are_two_hosts_of_one_server():
    done = load_settings(DEBUG="1")
    assert done.returncode == 0, done.stderr
    assert done.stdout.split()[0] == "http://localhost:8000"
