"""OAuth end to end: the example ``examples/oauth-tasks`` against a real OAuth 2 authorization
server (django-oauth-toolkit in the live test server), through real processes: the web
server, a Celery worker and the runtime host. A browser-like requests session signed in at
the platform presses the Connect button (a state issued to that member), is sent to the
integration's endpoint on the integrations origin and on to the provider, where it signs in
(its own cookie jar: another site), consents, and comes back with the code."""

import re
import shutil
import time
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import parse_qs, urlencode, urljoin, urlsplit

import pytest
import requests
from django.db import connection
from oauth2_provider.models import AccessToken, Application

from docplatform.events.models import Delivery, Event
from integrations.environment import installation_public_endpoint
from integrations.models import Installation, OAuthState
from integrations.services import integration_publish_folder
from integrations.services.installations import installation_create
from integrations.services.oauth import oauth_connect_start
from tests.conftest import wait_until
from tests.factories import MembershipFactory, OrganizationFactory, UserFactory
from tests.integrations.conftest import listing_approve

pytestmark = [
    pytest.mark.urls("tests.integrations.oauth_provider"),
    pytest.mark.usefixtures("celery_worker"),
]

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "oauth-tasks"
CLIENT_ID = "docs-platform"
CLIENT_SECRET = "docs-platform-client-secret"
PROVIDER_USER = "tracker-user"


class Forms(HTMLParser):
    """The forms of a page: each one's action and the values its inputs would send."""

    def __init__(self, html: str):
        super().__init__()
        self.forms = []
        self.feed(html)

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if tag == "form":
            self.forms.append(
                {"action": attrs.get("action") or "", "class": attrs.get("class"), "fields": {}}
            )
        elif tag == "input" and self.forms and attrs.get("type") != "submit" and "name" in attrs:
            self.forms[-1]["fields"][attrs["name"]] = attrs.get("value") or ""


def submit(session, page: requests.Response, form_class=None, **values) -> requests.Response:
    """Submit the page's first form (of ``form_class``) with its own values and ``values``,
    without following the redirect."""
    form = next(form for form in Forms(page.text).forms if form_class in (None, form["class"]))
    action = urljoin(page.url, form["action"]) if form["action"] else page.url
    return session.post(action, data={**form["fields"], **values}, allow_redirects=False)


@pytest.fixture
def provider_url(live_server) -> str:
    """The provider, served by the live server beside the platform (tests' URLconf); the
    browser signs in there with a cookie jar of its own (``at_provider``), as at another site."""
    return live_server.url


@pytest.fixture
def provider_user(db, settings):
    settings.LOGIN_URL = "marketplace:login"  # where the provider's consent page signs in
    return UserFactory(username=PROVIDER_USER)


@pytest.fixture
def publish_example(org_admin, provider_url):
    """Publish ``examples/oauth-tasks`` with its secrets pointing at the local provider."""

    def publish(token_url=f"{provider_url}/o/token/", path=EXAMPLE):
        env = {
            "TASKS_CLIENT_ID": CLIENT_ID,
            "TASKS_CLIENT_SECRET": CLIENT_SECRET,
            "TASKS_AUTHORIZE_URL": f"{provider_url}/o/authorize/",
            "TASKS_TOKEN_URL": token_url,
            "TASKS_PROJECTS_URL": f"{provider_url}/tracker/api/projects",
        }
        return integration_publish_folder(
            path=path, publisher=org_admin, env=env
        ).version.integration

    return publish


@pytest.fixture
def install(runtime, org_admin, organization, provider_user):
    """Install an integration and register the platform at the provider for it."""

    def install_(integration) -> Installation:
        installation = installation_create(
            user=org_admin, integration=integration, organization=organization
        )
        Application.objects.create(
            name="Docs platform",
            client_id=CLIENT_ID,
            client_secret=CLIENT_SECRET,
            client_type=Application.CLIENT_CONFIDENTIAL,
            authorization_grant_type=Application.GRANT_AUTHORIZATION_CODE,
            redirect_uris=installation_public_endpoint(installation) + "/oauth",
            skip_authorization=False,
        )
        return installation

    return install_


@pytest.fixture
def installation(publish_example, install) -> Installation:
    return install(publish_example())


@pytest.fixture
def browser(live_server, org_admin) -> requests.Session:
    """A browser signed in at the platform as the installing organization's member."""
    session = requests.Session()
    session.trust_env = False
    login = session.get(f"{live_server.url}/marketplace/login/", timeout=10)
    signed_in = submit(session, login, username=org_admin.username, password="password")
    assert signed_in.status_code == 302, signed_in.text
    session.member = org_admin.username
    return session


def page_url(live_server, installation) -> str:
    return f"{live_server.url}/marketplace/orgs/acme/installations/{installation.pk}/"


def press_connect(browser, live_server, installation) -> str:
    """Press the Connect button on the installation's page: where the platform sends the
    browser (the integration's ``callback_url`` with a state issued to the member)."""
    page = browser.get(page_url(live_server, installation), timeout=10)
    assert page.status_code == 200
    assert re.search(r">Connect your task tracker</button>", page.text)
    [action] = re.findall(r'<form method="post" action="([^"]+/connect/)"', page.text)
    token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', page.text).group(1)
    pressed = browser.post(
        urljoin(page.url, action),
        data={"csrfmiddlewaretoken": token, "property": "tasks"},
        headers={"Referer": page.url},
        allow_redirects=False,
        timeout=10,
    )
    assert pressed.status_code == 302, pressed.text
    return pressed.headers["Location"]


def authorize(authorize_url: str, *, allow=True) -> str:
    """At the provider, in a browser tab of its own: sign in as its user, consent (or not);
    returns the callback URL."""
    browser = requests.Session()
    browser.trust_env = False
    to_login = browser.get(authorize_url, allow_redirects=False, timeout=10)
    assert to_login.status_code == 302 and "/marketplace/login/" in to_login.headers["Location"]
    login = browser.get(urljoin(authorize_url, to_login.headers["Location"]), timeout=10)
    signed_in = submit(browser, login, username=PROVIDER_USER, password="password")
    assert signed_in.status_code == 302, signed_in.text
    consent = browser.get(urljoin(authorize_url, signed_in.headers["Location"]), timeout=10)
    assert consent.status_code == 200 and "Authorize Docs platform?" in consent.text
    answer = submit(browser, consent, allow="Authorize") if allow else submit(browser, consent)
    assert answer.status_code == 302, answer.text
    return answer.headers["Location"]


def start_flow(browser, live_server, installation, *, allow=True) -> str:
    link = press_connect(browser, live_server, installation)
    start = browser.get(link, allow_redirects=False, timeout=20)
    assert start.status_code == 302
    return authorize(start.headers["Location"], allow=allow)


def assert_not_connected(installation, page: requests.Response, status: int, title: str):
    assert page.status_code == status
    assert f"<h1>{title}</h1>" in page.text
    assert "Traceback" not in page.text
    installation.refresh_from_db()
    assert (installation.status, installation.credentials) == ("pending", {})


def query_of(url: str) -> dict:
    return {key: values[0] for key, values in parse_qs(urlsplit(url).query).items()}


@pytest.mark.slow
def test_connect_then_pick_a_project(browser, live_server, provider_url, installation):
    endpoint = installation_public_endpoint(installation)
    assert endpoint.startswith("http://127.0.0.1:")  # the integrations origin
    link = press_connect(browser, live_server, installation)
    assert link.startswith(endpoint + "/oauth?state=")
    issued = OAuthState.objects.get()
    assert issued.issued_to.username == browser.member and issued.consumed_at is None

    # The integration redirects to the provider with a state the platform issued.
    start = browser.get(link, allow_redirects=False, timeout=20)
    assert start.status_code == 302
    authorize_url = start.headers["Location"]
    assert authorize_url.startswith(f"{provider_url}/o/authorize/?")
    sent = query_of(authorize_url)
    assert sent["client_id"] == CLIENT_ID
    assert sent["redirect_uri"] == endpoint + "/oauth"
    assert sent["scope"] == "projects:read"
    assert sent["response_type"] == "code"
    assert sent["state"] == query_of(link)["state"]

    # The provider sends the browser back with a code; the SDK exchanges it and stores it.
    callback = authorize(authorize_url)
    assert callback.startswith(endpoint + "/oauth?")
    assert query_of(callback)["state"] == sent["state"] and query_of(callback)["code"]
    done = browser.get(callback, timeout=20)
    assert done.status_code == 200 and "<h1>Connected</h1>" in done.text

    installation.refresh_from_db()
    token = AccessToken.objects.get()
    assert token.user.username == PROVIDER_USER and token.scope == "projects:read"
    assert installation.status == "active"
    assert installation.credentials["tasks"]["access_token"] == token.token
    assert installation.credentials["tasks"]["refresh_token"] == token.refresh_token.token
    assert installation.configuration == {}
    with connection.cursor() as cursor:
        cursor.execute("SELECT * FROM integrations_installation WHERE id = %s", [installation.pk])
        row = " ".join(str(value) for value in cursor.fetchone())
    assert token.token not in row and token.refresh_token.token not in row

    setup = Event.objects.filter(type="installation_setup").order_by("-created_at").first()
    assert setup.payload == {"status": "active", "changed": ["tasks"]}
    delivery = Delivery.objects.get(event=setup)
    wait_until(lambda: Delivery.objects.get(pk=delivery.pk).status == "succeeded")

    # Never shown back: the API says connected, the page says Connected.
    issued.refresh_from_db()
    assert issued.consumed_at is not None  # who connected, and when
    shown = browser.get(f"{live_server.url}/api/v1/installations/{installation.pk}/", timeout=10)
    assert shown.json()["configuration"] == {
        "tasks": {
            "connected": True,
            "connectedBy": browser.member,
            "connectedAt": issued.consumed_at.isoformat(),
        }
    }
    page = browser.get(page_url(live_server, installation), timeout=20)
    assert "Connected" in page.text and ">Reconnect</button>" in page.text
    assert f"by {browser.member}," in page.text
    for text in (shown.text, page.text):
        assert token.token not in text and token.refresh_token.token not in text

    # The project's options come from the provider, read with the stored token.
    options = browser.get(
        f"{live_server.url}/api/v1/installations/{installation.pk}/configuration/project/options/",
        timeout=20,
    )
    assert options.status_code == 200, options.text
    assert options.json() == {
        "options": [
            {"value": "docs", "label": f"Docs ({PROVIDER_USER})"},
            {"value": "web", "label": "Website"},
        ]
    }
    assert '<option value="web">Website</option>' in page.text
    saved = submit(browser, page, "configuration-form", **{"configuration-project": "web"})
    assert saved.status_code == 302
    installation.refresh_from_db()
    assert installation.configuration == {"project": "web"}
    assert installation.status == "active"


# --- Refused flows: each leaves the installation not connected, with a clear page -----------


def test_without_a_members_state_the_flow_never_starts(browser, installation):
    """Knowing the endpoint is not enough: without a state issued to a member by the Connect
    button, the integration answers 400 and sends nobody to the provider."""
    endpoint = installation_public_endpoint(installation)
    anonymous = requests.Session()
    anonymous.trust_env = False
    for session, url in (
        (anonymous, endpoint + "/oauth"),
        (browser, endpoint + "/oauth"),  # signed in at the platform: no cookie of it goes there
        (anonymous, endpoint + "/oauth?state="),
        (anonymous, endpoint + "/oauth?state=made-up"),
    ):
        page = session.get(url, allow_redirects=False, timeout=20)
        assert page.status_code == 400, url
        assert "Location" not in page.headers
        assert "<h1>Connection failed</h1>" in page.text and "Traceback" not in page.text
    assert "Connect button" in anonymous.get(endpoint + "/oauth", timeout=20).text
    assert not OAuthState.objects.exists()
    installation.refresh_from_db()
    assert (installation.status, installation.credentials) == ("pending", {})
    assert not AccessToken.objects.exists()


def test_another_installations_state_never_starts_a_flow(
    browser, installation, org_admin, publish_example, tmp_path
):
    other_org = OrganizationFactory(subdomain="globex")
    other_member = MembershipFactory(organization=other_org, role="admin").user
    # Made public (a copy of the example saying so), and approved by an operator.
    public = tmp_path / "oauth-tasks"
    shutil.copytree(EXAMPLE, public)
    manifest = public / "service-manifest.yaml"
    manifest.write_text(manifest.read_text().replace("visibility: private", "visibility: public"))
    integration = listing_approve(publish_example(path=public))
    other = installation_create(user=other_member, integration=integration, organization=other_org)
    theirs = oauth_connect_start(user=other_member, installation=other, property_name="tasks")
    ours = oauth_connect_start(user=org_admin, installation=installation, property_name="tasks")
    for target, start in ((installation, theirs), (other, ours)):
        url = installation_public_endpoint(target) + "/oauth?" + urlencode({"state": start.state})
        page = browser.get(url, allow_redirects=False, timeout=20)
        assert page.status_code == 400 and "Location" not in page.headers
        assert "invalid, expired or already used" in page.text
    assert set(OAuthState.objects.values_list("consumed_at", flat=True)) == {None}
    for each in (installation, other):
        each.refresh_from_db()
        assert each.credentials == {}


def test_a_forged_state_is_refused_and_the_code_never_exchanged(browser, live_server, installation):
    callback = start_flow(browser, live_server, installation)
    query = query_of(callback)
    signed, signature = query["state"].rsplit(":", 1)
    forged = signed + ":" + ("A" if signature[0] != "A" else "B") + signature[1:]
    page = browser.get(callback.split("?")[0], params={**query, "state": forged}, timeout=20)
    assert_not_connected(installation, page, 400, "Connection failed")
    assert "invalid, expired or already used" in page.text
    assert not AccessToken.objects.exists()


@pytest.mark.slow
def test_a_replayed_callback_is_refused(browser, live_server, installation):
    callback = start_flow(browser, live_server, installation)
    assert browser.get(callback, timeout=20).status_code == 200
    installation.refresh_from_db()
    credentials = installation.credentials

    replayed = browser.get(callback, timeout=20)
    assert replayed.status_code == 400 and "already used" in replayed.text
    assert "Traceback" not in replayed.text
    installation.refresh_from_db()
    assert installation.credentials == credentials  # nothing exchanged, nothing written
    assert AccessToken.objects.count() == 1


@pytest.mark.slow
def test_an_expired_state_is_refused(browser, live_server, installation, settings):
    callback = start_flow(browser, live_server, installation)
    # Shortened once the flow started (a loaded machine took over a second to start it).
    settings.OAUTH_STATE_MAX_AGE = 1
    time.sleep(2.1)
    page = browser.get(callback, timeout=20)
    assert_not_connected(installation, page, 400, "Connection failed")
    assert "expired" in page.text
    assert not AccessToken.objects.exists()


@pytest.mark.slow
def test_a_denied_consent_connects_nothing(browser, live_server, installation):
    callback = start_flow(browser, live_server, installation, allow=False)
    assert query_of(callback)["error"] == "access_denied"
    page = browser.get(callback, timeout=20)
    assert_not_connected(installation, page, 400, "Connection cancelled")
    assert "Access was denied at the provider." in page.text


def test_a_failing_token_endpoint_connects_nothing(
    browser, live_server, provider_url, publish_example, install
):
    installation = install(publish_example(token_url=f"{provider_url}/tracker/broken-token"))
    callback = start_flow(browser, live_server, installation)
    page = browser.get(callback, timeout=20)
    assert_not_connected(installation, page, 502, "Connection failed")
    assert "the token endpoint answered 500" in page.text


def test_options_before_connecting_say_why_there_are_none(browser, live_server, installation):
    options = browser.get(
        f"{live_server.url}/api/v1/installations/{installation.pk}/configuration/project/options/",
        timeout=20,
    )
    assert options.status_code == 502
    assert options.json()["errors"][0]["detail"] == (
        "the integration answered HTTP 409 on /projects: connect your task tracker account first"
    )
    page = browser.get(page_url(live_server, installation), timeout=20)
    assert 'type="text" name="configuration-project"' in page.text
    assert "connect your task tracker account first" in page.text
