"""``context.fetch`` goes through the runtime host, against real local HTTP servers: allowed,
refused by address, refused by the manifest's ``network.fetch`` (with none declared, only the
platform API), redirects not followed, a slow-drip server cut at the deadline, the platform
API reachable below ``apiEndpoint`` only.

The host allows 127.0.0.2 (``RUNTIME_ALLOWED_NETWORKS``), as development allows loopback; a
server on 127.0.0.1 stands for any non-public address."""

import base64
import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from .conftest import start_host
from .support import EnvelopeClient, environment_for

FETCH = {
    "type": "fetch",
    "eventId": "e",
    "request": {"method": "GET", "url": "http://p/x", "headers": {}},
}
FETCHER = """
import json
from docplatform_sdk import Response, create_integration
from docplatform_sdk.context import FetchError

def fetch(request, context):
    asked = request.json()
    try:
        answer = context.fetch(asked["url"], method=asked.get("method", "GET"),
                               headers=asked.get("headers"), body=asked.get("body"))
    except FetchError as error:
        return Response.json({"fetch_error": str(error)})
    return Response.json({
        "status": answer.status,
        "headers": {k.lower(): v for k, v in answer.headers.items()},
        "body": answer.text(),
    })

integration = create_integration(fetch=fetch)
"""


class Recorder(BaseHTTPRequestHandler):
    seen: list = []

    def do_GET(self):
        self.seen.append(
            (self.server.server_address[0], self.command, self.path, dict(self.headers))
        )
        if self.path == "/redirect":
            self.send_response(302)
            self.send_header("Location", "http://127.0.0.2:1/elsewhere")
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        if self.path == "/drip":
            self.wfile.write(b"HTTP/1.1 200 OK\r\n")
            for _ in range(60):  # one header byte every 0.2 s: never done within 1.5 s
                self.wfile.write(b"X")
                self.wfile.flush()
                time.sleep(0.2)
            return
        body = json.dumps({"hello": "from " + self.server.server_address[0]}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    do_POST = do_GET

    def log_message(self, format, *args):
        pass


@pytest.fixture(scope="module")
def servers():
    started = []
    for address in ("127.0.0.2", "127.0.0.1"):
        httpd = ThreadingHTTPServer((address, 0), Recorder)
        httpd.daemon_threads = True
        threading.Thread(target=httpd.serve_forever, args=(0.05,), daemon=True).start()
        started.append(httpd)
    yield {s.server_address[0]: f"http://{s.server_address[0]}:{s.server_port}" for s in started}
    for httpd in started:
        httpd.shutdown()
        httpd.server_close()


@pytest.fixture(scope="module")
def client(tmp_path_factory):
    host = start_host(
        tmp_path_factory,
        RUNTIME_ALLOWED_NETWORKS="127.0.0.2/32",
        RUNTIME_FETCH_TIMEOUT="1.5",
        RUNTIME_CALL_TIMEOUT="5",
    )
    yield EnvelopeClient(host)
    host.stop()


ANY_HOST = ["*"]


def call(client, request: dict, network, name, api_endpoint):
    """The host's answer to a call whose code fetches ``request``; ``network`` is the
    manifest's ``network.fetch`` (None: not declared)."""
    environment = environment_for(name, FETCHER, client.host.url)
    if network is not None:
        environment["integration"]["network"] = {"fetch": network}
    if api_endpoint is not None:
        environment["apiEndpoint"] = api_endpoint
    event = {**FETCH, "request": {**FETCH["request"], "method": "POST"}}
    answer = client.call(name, FETCHER, event, environment, json.dumps(request).encode())
    assert answer.status_code == 200, answer.text
    return answer


def ask(client, request: dict, network=ANY_HOST, name="fetcher", api_endpoint=None):
    """What the code saw of its request."""
    return call(client, request, network, name, api_endpoint).json()


def printed(answer) -> str:
    """The call's output, as its log line keeps it."""
    return base64.b64decode(answer.headers.get("X-Runtime-Output", "")).decode()


@pytest.mark.slow
def test_an_allowed_request_is_performed_by_the_host(client, servers):
    seen = ask(client, {"url": servers["127.0.0.2"] + "/hi?x=1", "headers": {"X-Mine": "1"}})
    assert seen["status"] == 200
    assert json.loads(seen["body"]) == {"hello": "from 127.0.0.2"}
    assert Recorder.seen[-1][:3] == ("127.0.0.2", "GET", "/hi?x=1")
    assert Recorder.seen[-1][3]["X-Mine"] == "1"


@pytest.mark.slow
def test_a_non_public_address_is_refused_with_a_403_saying_why(client, servers):
    before = len(Recorder.seen)
    seen = ask(client, {"url": servers["127.0.0.1"] + "/secret"})
    assert seen["status"] == 403
    assert seen["headers"]["x-runtime-egress"] == "refused"
    assert json.loads(seen["body"]) == {
        "error": "egress_refused",
        "message": "127.0.0.1 resolves to 127.0.0.1, a loopback address",
    }
    assert len(Recorder.seen) == before  # nothing reached the server


@pytest.mark.parametrize(
    "url",
    [
        "http://[::ffff:127.0.0.1]:80/",  # IPv4-mapped
        "http://[2002:7f00:1::]:80/",  # 6to4 of 127.0.0.1
        "http://[64:ff9b::a00:1]:80/",  # NAT64 of 10.0.0.1
        "file:///etc/passwd",
        "http://user:pass@example.com/",
    ],
)
def test_disguised_and_odd_urls_are_refused(client, url):
    seen = ask(client, {"url": url})
    assert seen["status"] == 403, seen
    assert json.loads(seen["body"])["error"] == "egress_refused"


def test_only_the_hosts_of_network_fetch_are_reached(client, servers):
    before = len(Recorder.seen)
    refused = ask(client, {"url": servers["127.0.0.2"] + "/"}, network=["api.example.com"])
    assert refused["status"] == 403
    assert json.loads(refused["body"])["message"] == (
        "127.0.0.2 is not in the manifest's network.fetch; add it: "
        'network.fetch: ["127.0.0.2"] (or ["*"] for any public host)'
    )
    assert len(Recorder.seen) == before
    allowed = ask(client, {"url": servers["127.0.0.2"] + "/"}, network=["127.0.0.2"], name="f2")
    assert allowed["status"] == 200
    wildcard = ask(client, {"url": servers["127.0.0.2"] + "/"}, network=["*.example.com"])
    assert wildcard["status"] == 403


def test_without_network_fetch_only_the_platform_api_is_reached(client, servers):
    """No ``network.fetch``: the platform API answers, any other host is refused with how to
    declare it, and the refusal is in the call's output (its log line) too."""
    api = servers["127.0.0.1"] + "/api/v1"
    before = len(Recorder.seen)
    answer = call(client, {"url": "https://api.example.com/v2/items"}, None, "quiet", api)
    refused = answer.json()
    reason = (
        "api.example.com is not in the manifest's network.fetch; add it: "
        'network.fetch: ["api.example.com"] (or ["*"] for any public host)'
    )
    assert refused["status"] == 403
    assert refused["headers"]["x-runtime-egress"] == "refused"
    assert json.loads(refused["body"]) == {"error": "egress_refused", "message": reason}
    assert printed(answer) == f"[fetch refused: {reason}]\n"
    allowed_network = ask(client, {"url": servers["127.0.0.2"] + "/"}, None, "quiet", api)
    assert allowed_network["status"] == 403  # an address the host may reach, not declared
    assert len(Recorder.seen) == before

    inside = ask(client, {"url": api + "/installation/"}, None, "quiet", api)
    assert inside["status"] == 200
    assert Recorder.seen[-1][:3] == ("127.0.0.1", "GET", "/api/v1/installation/")


def test_an_empty_network_fetch_is_the_platform_api_only_too(client, servers):
    refused = ask(client, {"url": servers["127.0.0.2"] + "/"}, network=[])
    assert refused["status"] == 403
    assert "add it: network.fetch" in json.loads(refused["body"])["message"]


def test_any_public_host_still_passes_the_outbound_guard(client, servers):
    """``["*"]`` declares every host, not every address: loopback stays refused."""
    assert ask(client, {"url": servers["127.0.0.2"] + "/"})["status"] == 200
    guarded = ask(client, {"url": servers["127.0.0.1"] + "/"})
    assert json.loads(guarded["body"])["message"].endswith("a loopback address")


def test_a_redirect_is_returned_not_followed(client, servers):
    seen = ask(client, {"url": servers["127.0.0.2"] + "/redirect"})
    assert seen["status"] == 302
    assert seen["headers"]["location"] == "http://127.0.0.2:1/elsewhere"


@pytest.mark.slow
def test_a_slow_drip_server_is_cut_at_the_deadline(client, servers):
    started = time.monotonic()
    seen = ask(client, {"url": servers["127.0.0.2"] + "/drip"})
    took = time.monotonic() - started
    assert seen == {"fetch_error": "timeout: no answer within 1.5 s"}
    assert took < 4, took  # 1.5 s deadline, not 12 s of dripping
    assert ask(client, {"url": servers["127.0.0.2"] + "/"})["status"] == 200


def test_the_platform_api_is_reached_below_its_endpoint_only(client, servers):
    api = servers["127.0.0.1"] + "/api/v1"
    inside = ask(client, {"url": api + "/installation/"}, api_endpoint=api, name="api-user")
    assert inside["status"] == 200
    assert Recorder.seen[-1][:3] == ("127.0.0.1", "GET", "/api/v1/installation/")
    for escape in ("/api/v1/../admin/", "/api/v1/%2e%2e/admin/", "/api/v2/", "/admin/"):
        outside = ask(
            client, {"url": servers["127.0.0.1"] + escape}, api_endpoint=api, name="api-user"
        )
        assert outside["status"] == 403, escape


def test_a_malformed_request_from_the_worker_is_an_error_not_a_crash(client, servers):
    seen = ask(client, {"url": servers["127.0.0.2"] + "/", "method": "BREW"})
    assert seen == {
        "fetch_error": "the request is malformed: method must be one of "
        "DELETE, GET, HEAD, OPTIONS, PATCH, POST, PUT"
    }


RAW = """
import json
from docplatform_sdk import Response, create_integration

def fetch(request, context):
    channel = context.fetch.__self__  # the worker's pipe to the host, as hostile code finds it
    answers = []
    for asked in request.json():
        channel.send({"fetch": asked})
        answers.append({key: value for key, value in channel.receive().items() if key != "body"})
    return Response.json(answers)

integration = create_integration(fetch=fetch)
"""


def test_malformed_requests_written_on_the_pipe_get_errors_and_the_worker_serves_on(
    client, servers
):
    url = servers["127.0.0.2"] + "/"
    hostile = [
        {"url": url, "timeout": "soon"},
        {"url": url, "timeout": float("nan")},
        {"url": url, "timeout": -1},
        {"url": url, "timeout": True},
        {"url": url, "headers": {"X-Name": "caf\u00e9 \u2603"}},
        {"url": url, "body": "not base64!"},
        {"url": ["not", "a", "string"]},
    ]
    event = {**FETCH, "request": {**FETCH["request"], "method": "POST"}}
    environment = environment_for("raw", RAW, client.host.url)
    environment["integration"]["network"] = {"fetch": ANY_HOST}
    answer = client.call("raw", RAW, event, environment, json.dumps(hostile).encode())
    assert answer.status_code == 200, answer.text
    errors = [item["fetched"]["error"] for item in answer.json()]
    assert errors == [
        *["the request is malformed: timeout must be a number of seconds above 0"] * 4,
        "the request is malformed: header names and values must be ASCII",
        errors[5],
        "the request is malformed: url must be a string",
    ]
    assert errors[5].startswith("the request is malformed: ")
    fine = client.call("raw", RAW, event, environment, json.dumps([{"url": url}]).encode())
    assert fine.json()[0]["fetched"]["status"] == 200
