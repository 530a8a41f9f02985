"""The integrations origin as a browser sees it (DESIGN.md, "Trust boundaries" 3): Debian's
Chromium driven by Playwright, an admin signed in at the platform, and a real integration run
by the runtime host behind its public endpoint on ``INTEGRATIONS_URL``.

An integration's endpoint gets no platform cookie; its HTML and scripts get nothing of the
admin's from the platform's API; its ``Set-Cookie`` never changes the platform's session.
"""

import json
import textwrap

import pytest
import requests

from integrations.environment import installation_public_endpoint
from integrations.services import integration_publish_folder
from integrations.services.installations import installation_create
from tests.integrations.conftest import minimal_manifest

pytestmark = [pytest.mark.slow, pytest.mark.usefixtures("celery_worker")]

SCRIPT = textwrap.dedent(
    '''
    import json

    from docplatform_sdk import Response, create_integration

    PAGE = """<!doctype html><html><head><meta charset="utf-8"><title>Integration page</title>
    </head><body><h1>Integration page</h1>
    <pre id="cookies">pending</pre><pre id="relative">pending</pre><pre id="absolute">pending</pre>
    <script>
    document.getElementById("cookies").textContent = "cookies=" + document.cookie;
    async function grab(id, url) {
      const out = document.getElementById(id);
      try {
        const answer = await fetch(url, {credentials: "include"});
        out.textContent = "answered " + answer.status + " " + await answer.text();
      } catch (error) {
        out.textContent = "refused " + error;
      }
    }
    grab("relative", "/api/v1/me/");
    grab("absolute", API + "/me/");
    </script></body></html>"""


    def fetch(request, context):
        if request.route == "/headers":
            return Response.json(
                {
                    "cookie": request.headers.get("cookie"),
                    "authorization": request.headers.get("authorization"),
                }
            )
        if request.route == "/plant-session":
            planted = "sessionid=planted-by-the-integration; Path=/; SameSite=Lax"
            return Response.html("<p>planted</p>", headers={"Set-Cookie": planted})
        if request.route == "/plant-session-for-the-platform":
            planted = "sessionid=planted-by-the-integration; Domain=localhost; Path=/"
            return Response.html("<p>planted</p>", headers={"Set-Cookie": planted})
        if request.route == "/own-cookie":
            return Response.html("<p>kept</p>", headers={"Set-Cookie": "theme=dark; Path=/"})
        api = json.dumps(context.environment.apiEndpoint)
        return Response.html(PAGE.replace("API +", api + " +"))


    integration = create_integration(fetch=fetch)
    '''
)


@pytest.fixture
def endpoint(runtime, write_integration, org_admin, organization) -> str:
    root = write_integration(
        minimal_manifest(name="page-maker", script="main.py", scopes=[]),
        files={"main.py": SCRIPT},
        folder="page-maker",
    )
    integration = integration_publish_folder(path=root, publisher=org_admin).version.integration
    installation = installation_create(
        user=org_admin, integration=integration, organization=organization
    )
    return installation_public_endpoint(installation)


@pytest.fixture
def signed_in(browser_page, origins, org_admin):
    """The admin signed in at the platform; answers the page and the session cookie."""
    page = browser_page
    settings = origins
    page.goto(f"{settings.PLATFORM_URL}/marketplace/login/")
    page.fill("input[name=username]", org_admin.username)
    page.fill("input[name=password]", "password")
    page.click("button:has-text('Sign in')")
    page.wait_for_selector(f".username:has-text('{org_admin.username}')")
    [session] = [c for c in page.context.cookies(settings.PLATFORM_URL) if c["name"] == "sessionid"]
    return page, session


def cookie_names(page, url) -> set[str]:
    return {cookie["name"] for cookie in page.context.cookies(url)}


def test_a_signed_in_admin_sends_no_platform_cookie_to_an_endpoint(signed_in, endpoint, settings):
    page, _ = signed_in
    assert endpoint.startswith(settings.INTEGRATIONS_URL + "/installations/")
    assert {"sessionid", "csrftoken"} <= cookie_names(page, settings.PLATFORM_URL)

    answer = page.goto(endpoint + "/headers")
    assert answer.status == 200
    assert json.loads(page.inner_text("body")) == {"cookie": None, "authorization": None}
    assert cookie_names(page, settings.INTEGRATIONS_URL) == set()


def test_an_integrations_script_gets_nothing_of_the_admin(signed_in, endpoint, org_admin):
    page, _ = signed_in
    page.goto(endpoint + "/page")
    page.wait_for_function(
        "['relative', 'absolute'].every(id => "
        "document.getElementById(id).textContent !== 'pending')"
    )
    cookies, relative, absolute = (
        page.inner_text(selector) for selector in ("#cookies", "#relative", "#absolute")
    )
    # No platform cookie is readable there, the page's own origin serves no API, and the
    # platform's API on its own origin does not answer the page's script.
    assert cookies == "cookies="
    assert relative.startswith("answered 404 ")
    assert "only integration endpoints are served on this host" in relative
    assert absolute.startswith("refused TypeError")
    for text in (cookies, relative, absolute):
        assert org_admin.username not in text and org_admin.email not in text


def test_an_integrations_set_cookie_does_not_change_the_platforms_session(
    signed_in, endpoint, settings, org_admin
):
    page, session = signed_in
    for route in ("/plant-session", "/plant-session-for-the-platform", "/own-cookie"):
        assert page.goto(endpoint + route).status == 200

    [after] = [c for c in page.context.cookies(settings.PLATFORM_URL) if c["name"] == "sessionid"]
    assert after["value"] == session["value"]
    # The integration's own cookie stays on its origin, and goes only there.
    assert cookie_names(page, settings.INTEGRATIONS_URL) == {"theme"}
    assert "theme" not in cookie_names(page, settings.PLATFORM_URL)
    page.goto(endpoint + "/headers")
    assert json.loads(page.inner_text("body"))["cookie"] == "theme=dark"

    page.goto(f"{settings.PLATFORM_URL}/marketplace/")
    assert page.inner_text(".username") == org_admin.username


def test_the_relay_drops_platform_cookies_and_tokens_sent_to_an_endpoint(endpoint):
    """Whatever a client sends there, platform credentials never reach integration code."""
    sent = requests.get(
        endpoint + "/headers",
        headers={
            "Cookie": "sessionid=abc; theme=dark; csrftoken=def; messages=x",
            "Authorization": "Bearer dpt_someone-s-personal-token",
        },
        timeout=20,
    )
    assert sent.json() == {"cookie": "theme=dark", "authorization": None}
    installation_token = requests.get(
        endpoint + "/headers", headers={"Authorization": "bearer dpi_an-installation"}, timeout=20
    )
    assert installation_token.json()["authorization"] is None
    own = requests.get(endpoint + "/headers", headers={"Authorization": "Basic dTpw"}, timeout=20)
    assert own.json() == {"cookie": None, "authorization": "Basic dTpw"}
    planted = requests.get(endpoint + "/plant-session", timeout=20)
    assert planted.status_code == 200 and "Set-Cookie" not in planted.headers
    assert requests.get(endpoint + "/own-cookie", timeout=20).cookies["theme"] == "dark"
