"""The SDK's OAuth handler, the platform API client and outbound fetch, against a real local
HTTP server that plays the platform API's state endpoints and a provider's token endpoint.

A flow starts only from a state the platform issued to a member (the Connect button sends the
browser to the handler with it): the handler checks it before redirecting and before
exchanging the code, and completes the flow with it."""

import asyncio
import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlsplit

import pytest
from docplatform_sdk import (
    Context,
    OAuthSetupError,
    PlatformAPIError,
    Request,
    create_oauth_handler,
)
from docplatform_sdk.testing import direct_fetch

ISSUED_STATE = "state-issued-by-the-platform"


class FakeServer:
    """What the handler talks to; records every request it gets, in order."""

    def __init__(self):
        self.requests = []
        self.live_states = {ISSUED_STATE: "connect"}
        self.token_failure = None  # (status, body) to answer on the token endpoint
        self.lock = threading.Lock()

    def answer(self, method, path, headers, body):
        with self.lock:
            self.requests.append({"method": method, "path": path, "headers": headers, "body": body})
        if (method, path) == ("POST", "/api/v1/installation/oauth/check"):
            with self.lock:
                property_name = self.live_states.get(json.loads(body)["state"])
            if property_name is None:
                return 400, {"error": "invalid_state"}
            return 200, {"property": property_name}
        if (method, path) == ("POST", "/api/v1/installation/oauth/complete"):
            completion = json.loads(body)
            with self.lock:
                property_name = self.live_states.pop(completion["state"], None)
            if property_name is None:
                return 400, {"error": "invalid_state"}
            return 200, {"configuration": completion["configuration"]}
        if (method, path) == ("GET", "/api/v1/installation/"):
            return 200, {"id": "inst-1"}
        if (method, path) == ("POST", "/provider/token"):
            if self.token_failure:
                return self.token_failure
            form = parse_qs(body.decode())
            if form.get("code") != ["the-code"] or form.get("client_secret") != ["shh"]:
                return 400, {"error": "invalid_grant"}
            return 200, {
                "access_token": "the-access-token",
                "refresh_token": "the-refresh-token",
                "expires_in": 3600,
                "token_type": "Bearer",
            }
        if path == "/outbound":
            return 418, {"echo": body.decode(), "method": method}
        return 404, {"error": "not_found"}

    def paths(self):
        return [(request["method"], request["path"]) for request in self.requests]


@pytest.fixture
def server():
    state = FakeServer()

    class Handler(BaseHTTPRequestHandler):
        def handle_any(self):
            body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
            status, answer = state.answer(self.command, self.path, dict(self.headers), body)
            data = answer if isinstance(answer, bytes) else json.dumps(answer).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        do_GET = do_POST = do_PATCH = handle_any

        def log_message(self, format, *args):
            pass

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=httpd.serve_forever, args=(0.01,), daemon=True)
    thread.start()
    state.url = f"http://127.0.0.1:{httpd.server_port}"
    yield state
    httpd.shutdown()
    httpd.server_close()


@pytest.fixture
def context(server):
    return Context(
        fetch=direct_fetch,
        environment={
            "apiEndpoint": f"{server.url}/api/v1",
            "apiTokens": {"integration": "integration-token", "installation": "installation-token"},
            "integration": {
                "name": "github",
                "version": 1,
                "urls": {"publicEndpoint": "https://runtime.example/integrations/github"},
                "configurations": {
                    "account": {
                        "properties": {
                            "org": {"type": "string", "title": "Org", "description": "."},
                            "connect": {
                                "type": "button",
                                "button_text": "Connect",
                                "callback_url": "/oauth",
                                "title": "Connect",
                                "description": ".",
                            },
                        }
                    }
                },
            },
            "secrets": {"CLIENT_ID": "client-1", "CLIENT_SECRET": "shh"},
            "installation": {
                "id": "inst-1",
                "status": "pending",
                "urls": {"publicEndpoint": "https://platform.example/i/inst-1"},
            },
        },
    )


def make_handler(server, **options):
    return create_oauth_handler(
        client_id="client-1",
        client_secret="shh",
        authorize_url="https://provider.example/authorize",
        access_token_url=f"{server.url}/provider/token",
        **options,
    )


def run(handler, context, url):
    return asyncio.run(handler(Request("GET", url), context))


START = f"https://platform.example/i/inst-1/oauth?state={ISSUED_STATE}"


def test_start_redirects_to_the_provider_with_a_platform_issued_state(server, context):
    handler = make_handler(server, scopes=["repo", "read:org"], prompt="consent")
    response = run(handler, context, START)

    assert response.status == 302
    location = urlsplit(response.headers["Location"])
    assert (
        f"{location.scheme}://{location.netloc}{location.path}"
        == "https://provider.example/authorize"
    )
    assert {key: values[0] for key, values in parse_qs(location.query).items()} == {
        "response_type": "code",
        "client_id": "client-1",
        "redirect_uri": "https://platform.example/i/inst-1/oauth",
        "scope": "repo read:org",
        "prompt": "consent",
        "state": ISSUED_STATE,
    }
    [check_request] = server.requests
    assert check_request["path"] == "/api/v1/installation/oauth/check"
    assert json.loads(check_request["body"]) == {"state": ISSUED_STATE}
    assert check_request["headers"]["Authorization"] == "Bearer installation-token"


@pytest.mark.parametrize("url", ["https://platform.example/i/inst-1/oauth", START + "&x=1"])
def test_a_start_without_a_member_issued_state_is_refused_before_any_redirect(server, context, url):
    forged = url.replace(ISSUED_STATE, "made-up")
    response = run(make_handler(server), context, forged)
    assert response.status == 400
    assert "Location" not in response.headers
    assert ("POST", "/provider/token") not in server.paths()
    assert server.live_states == {ISSUED_STATE: "connect"}


def test_an_explicit_redirect_url_wins(server, context):
    handler = make_handler(server, property_name="connect", redirect_url="https://x.example/cb")
    location = urlsplit(run(handler, context, START).headers["Location"])
    assert parse_qs(location.query)["redirect_uri"] == ["https://x.example/cb"]


def test_a_state_for_another_property_is_refused(server, context):
    response = run(make_handler(server, property_name="other"), context, START)
    assert response.status == 400
    assert "another property" in response.text()


def test_without_a_button_property_the_handler_says_so(server, context):
    del context.environment.integration.configurations["account"]["properties"]["connect"]
    with pytest.raises(OAuthSetupError, match="no button property"):
        run(make_handler(server), context, "https://platform.example/i/inst-1/oauth")


CALLBACK = f"https://platform.example/i/inst-1/oauth?code=the-code&state={ISSUED_STATE}"


def test_the_callback_checks_the_state_exchanges_the_code_and_completes_with_it(server, context):
    response = run(make_handler(server), context, CALLBACK)

    assert response.status == 200
    assert "Connected — you can close this window" in response.text()
    assert server.paths() == [
        ("POST", "/api/v1/installation/oauth/check"),
        ("POST", "/provider/token"),
        ("POST", "/api/v1/installation/oauth/complete"),
    ]
    token_form = parse_qs(server.requests[1]["body"].decode())
    assert token_form["grant_type"] == ["authorization_code"]
    assert token_form["client_id"] == ["client-1"]
    assert token_form["redirect_uri"] == ["https://platform.example/i/inst-1/oauth"]
    completion = server.requests[2]
    assert completion["headers"]["Authorization"] == "Bearer installation-token"
    assert json.loads(completion["body"])["state"] == ISSUED_STATE
    stored = json.loads(completion["body"])["configuration"]["connect"]
    assert stored["access_token"] == "the-access-token"
    assert stored["refresh_token"] == "the-refresh-token"
    assert stored["expires_at"] > 0


def test_a_forged_state_is_refused_before_any_exchange(server, context):
    response = run(make_handler(server), context, CALLBACK.replace(ISSUED_STATE, "forged"))
    assert response.status == 400
    assert "invalid, expired or already used" in response.text()
    assert server.paths() == [("POST", "/api/v1/installation/oauth/check")]


def test_a_replayed_state_is_refused(server, context):
    handler = make_handler(server)
    assert run(handler, context, CALLBACK).status == 200
    assert run(handler, context, CALLBACK).status == 400
    assert server.paths().count(("POST", "/provider/token")) == 1


def test_a_callback_without_state_is_refused(server, context):
    response = run(make_handler(server), context, "https://platform.example/i/inst-1/oauth?code=c")
    assert response.status == 400
    assert server.requests == []


def test_a_denied_consent_is_a_clear_400(server, context):
    url = "https://platform.example/i/inst-1/oauth?error=access_denied&state=" + ISSUED_STATE
    response = run(make_handler(server), context, url)
    assert response.status == 400
    assert "Access was denied" in response.text()
    assert server.requests == []


@pytest.mark.parametrize(
    ("failure", "shown"),
    [
        ((500, b"<html>internal error</html>"), "500"),
        ((400, {"error": "invalid_grant", "error_description": "code expired"}), "code expired"),
        ((200, {"token_type": "Bearer"}), "no access token"),
    ],
)
def test_a_failing_token_endpoint_is_502_and_stores_nothing(server, context, failure, shown):
    server.token_failure = failure
    response = run(make_handler(server), context, CALLBACK)
    assert response.status == 502
    assert shown in response.text()
    assert ("POST", "/api/v1/installation/oauth/complete") not in server.paths()


def test_an_unreachable_token_endpoint_is_502(server, context):
    handler = create_oauth_handler(
        client_id="client-1",
        client_secret="shh",
        authorize_url="https://provider.example/authorize",
        access_token_url="http://127.0.0.1:9/token",
    )
    response = run(handler, context, CALLBACK)
    assert response.status == 502
    assert "could not be reached" in response.text()


def test_a_custom_extract_credentials_gets_the_token_response(server, context):
    seen = {}

    def extract_credentials(response):
        seen.update(ok=response.ok, status=response.status_code, body=response.json())
        return {
            "configuration": {"connect": {"token": response["access_token"]}},
            "externalIds": ["github-user-7"],
        }

    assert (
        run(make_handler(server, extract_credentials=extract_credentials), context, CALLBACK).status
        == 200
    )
    assert seen["ok"] is True and seen["status"] == 200
    assert seen["body"]["access_token"] == "the-access-token"
    assert json.loads(server.requests[-1]["body"]) == {
        "state": ISSUED_STATE,
        "configuration": {"connect": {"token": "the-access-token"}},
        "externalIds": ["github-user-7"],
    }


def test_the_platform_api_client(server, context):
    assert context.api.installation() == {"id": "inst-1"}
    with pytest.raises(PlatformAPIError) as refused:
        context.api.get("/nowhere/")
    assert refused.value.status == 404
    assert refused.value.body == {"error": "not_found"}


def test_outbound_fetch_returns_any_status_as_a_response(server, context):
    response = context.fetch(
        f"{server.url}/outbound", method="POST", headers={"X-A": "1"}, body="hi"
    )
    assert response.status == 418
    assert not response.ok
    assert response.json() == {"echo": "hi", "method": "POST"}
