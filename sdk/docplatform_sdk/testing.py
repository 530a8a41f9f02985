"""Test an integration on your own machine, with pytest and the SDK alone (no platform).

``IntegrationTester(integration)`` calls the integration's handlers in this process the way
the runtime does (the same dispatch): ``send("space_content_updated", spaceId=...)`` an event
built from the catalogue's example (``sample_event``), ``request("GET", "/?name=Ada")`` its
``fetch``, ``render("greeter", action=...)`` a component. The environment is made up
(``make_environment``: an organization installation with your configuration and secrets), and
``context.fetch`` (with ``context.api``) is answered by the test: a ``FakeFetch`` where you say
what each URL answers, and which records every request::

    from docplatform_sdk import Response
    from docplatform_sdk.testing import FakeFetch, IntegrationTester

    from main import integration

    def test_content_updated_posts_the_space(capsys):
        fetch = FakeFetch().on("POST", "https://hooks.example.com/in", Response.json({}))
        tester = IntegrationTester(integration, fetch=fetch, secrets={"TOKEN": "t"})
        assert tester.send("space_content_updated", spaceId="s1")
        assert fetch.requests[0].json() == {"space": "s1"}

``direct_fetch`` instead sends each request from this process for real. Inside the runtime,
``context.fetch`` goes through the runtime host under the platform's outbound rules (public
hosts only, ``network.fetch``, no redirects, 10 s), so test against those rules too.
"""

import difflib
import json
import urllib.error
import urllib.request
import weakref
from collections.abc import Callable
from copy import deepcopy
from typing import Any

from .context import Environment, FetchError
from .definition import Integration
from .dispatch import Dispatcher, typed_event
from .events import EVENT_CLASSES, EXAMPLES
from .http_messages import Request, Response
from .jsonobject import JSONObject

#: The made-up platform the tester's environment names (``.test``: never a real host).
API_ENDPOINT = "https://docplatform.test/api/v1"
INSTALLATION_ID = EXAMPLES["installation_setup"]["installationId"]
PUBLIC_ENDPOINT = f"https://docplatform.test/installations/{INSTALLATION_ID}"


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args, **kwargs):
        return None  # a 3xx comes back as it is, as in the runtime


_opener = urllib.request.build_opener(_NoRedirect, urllib.request.ProxyHandler({}))


def _checked_url(url: str) -> None:
    if not url.startswith(("http://", "https://")):
        raise FetchError(f"only http and https URLs may be fetched, not {url!r}")


def direct_fetch(url, method="GET", headers=None, body=None, timeout=10) -> Response:
    """``context.fetch`` made here and now (any status comes back as a Response)."""
    if isinstance(body, str):
        body = body.encode()
    _checked_url(url)
    request = urllib.request.Request(  # noqa: S310 - an http(s) URL, checked above
        url, data=body, headers=dict(headers or {}), method=method
    )
    try:
        with _opener.open(request, timeout=timeout) as answer:
            return Response(answer.status, dict(answer.headers.items()), answer.read())
    except urllib.error.HTTPError as answer:
        return Response(answer.code, dict(answer.headers.items()), answer.read())
    except (urllib.error.URLError, OSError) as error:
        raise FetchError(str(getattr(error, "reason", error))) from None


class UnexpectedFetch(AssertionError):
    """The code fetched a URL the test gave no answer for (the message lists those it has)."""


class FakeFetch:
    """``context.fetch`` answered by the test. ``on(method, url, answer)`` says what a request
    answers: a Response, a callable taking the ``Request`` and returning one, or a
    ``FetchError`` to raise (no answer came); ``url`` is matched whole, or without its query
    when the rule's URL has none. The last matching rule wins. ``requests`` holds every
    request made, as ``Request`` objects (``.method``, ``.url``, ``.headers``, ``.json()``).
    A request no rule answers raises ``UnexpectedFetch``, which fails the test."""

    def __init__(self):
        self.rules: list[tuple[str, str, Any]] = []
        self.requests: list[Request] = []

    def on(self, method: str, url: str, answer: "Response | Callable | FetchError") -> "FakeFetch":
        self.rules.append((method.upper(), url, answer))
        return self

    def __call__(self, url, method="GET", headers=None, body=None, timeout=10) -> Response:
        _checked_url(url)
        request = Request(method, url, headers or {}, body or b"")
        self.requests.append(request)
        for rule_method, rule_url, answer in reversed(self.rules):
            if rule_method == request.method and rule_url in (url, url.split("?", 1)[0]):
                return _answered(answer, request)
        known = "; ".join(f"{m} {u}" for m, u, _ in self.rules) or "none"
        raise UnexpectedFetch(f"no answer for {request.method} {url} (answers: {known})")


def _answered(answer, request: Request) -> Response:
    if isinstance(answer, FetchError):
        raise answer
    if callable(answer) and not isinstance(answer, Response):
        answer = answer(request)
    if not isinstance(answer, Response):
        raise TypeError(f"an answer is a Response, not {type(answer).__name__}")
    return answer


def make_environment(
    *,
    name: str = "my-integration",
    configuration: dict | None = None,
    secrets: dict | None = None,
    **extra,
) -> Environment:
    """A made-up environment as the platform sends it for an organization installation:
    ``configuration`` is the installation's, ``secrets`` the integration's; ``extra`` adds or
    replaces top-level keys (``spaceInstallation``, ``site``...)."""
    return Environment(
        {
            "apiEndpoint": API_ENDPOINT,
            "apiTokens": {"integration": "integration-token", "installation": "installation-token"},
            "integration": {
                "name": name,
                "version": 1,
                "contentHash": "0" * 64,
                "urls": {"publicEndpoint": f"https://docplatform.test/integrations/{name}"},
                "configurations": {},
            },
            "secrets": dict(secrets or {}),
            "installation": {
                "id": INSTALLATION_ID,
                "status": "active",
                "configuration": dict(configuration or {}),
                "externalIds": [],
                "target": "all",
                "urls": {"publicEndpoint": PUBLIC_ENDPOINT},
            },
            **extra,
        }
    )


def sample_event(event_type: str, **fields):
    """An event of ``event_type`` as a handler receives it (its class in
    ``docplatform_sdk.events``), built from the catalogue's example body, the platform's sample
    values that ``trigger`` sends too; ``fields`` replace or add values. An unknown type or
    field raises ValueError, naming the closest."""
    if event_type not in EXAMPLES:
        raise ValueError(f"no event type {event_type!r}{_did_you_mean(event_type, EXAMPLES)}")
    known = EVENT_CLASSES[event_type].__annotations__
    unknown = [name for name in fields if name not in known]
    if unknown:
        raise ValueError(
            f"{event_type} has no field {unknown[0]!r}{_did_you_mean(unknown[0], known)}"
        )
    return typed_event({**deepcopy(EXAMPLES[event_type]), **fields})


def _did_you_mean(name: str, choices) -> str:
    close = difflib.get_close_matches(name, list(choices), n=1)
    return f": did you mean {close[0]!r}?" if close else ""


class IntegrationTester:
    """Calls one integration's handlers here, as the runtime does, with ``environment`` (by
    default ``make_environment(configuration=..., secrets=...)``) and ``fetch`` (by default
    an empty ``FakeFetch``: any request fails the test). Exceptions of the code propagate."""

    __test__ = False  # not a pytest test class

    def __init__(
        self,
        integration: Integration,
        *,
        environment: dict | None = None,
        fetch: Callable | None = None,
        configuration: dict | None = None,
        secrets: dict | None = None,
    ):
        if environment is None:
            environment = make_environment(configuration=configuration, secrets=secrets)
        elif configuration is not None or secrets is not None:
            raise TypeError("give an environment, or configuration and secrets, not both")
        self.environment = Environment(environment)
        self.fetch = fetch if fetch is not None else FakeFetch()
        self.dispatcher = Dispatcher(integration, fetch=self.fetch)
        # An async handler's event loop is closed with the tester (no ResourceWarning).
        weakref.finalize(self, self.dispatcher.close)

    def _dispatch(self, event: dict, body: bytes | None = None):
        return self.dispatcher.dispatch(event, deepcopy(self.environment), body)

    def send(self, event, **fields) -> bool:
        """Send an event (a type, built with ``sample_event(type, **fields)``, or an event
        made by ``sample_event``); True when the integration has a handler for it."""
        if isinstance(event, str):
            event = sample_event(event, **fields)
        elif fields:
            raise TypeError("fields go with an event type, not with a made event")
        return json.loads(self._dispatch(dict(event)).body)["handled"]

    def request(
        self,
        method: str,
        path: str = "/",
        *,
        body: bytes | str | None = None,
        json: Any = None,
        headers: dict | None = None,
    ) -> Response:
        """Call ``fetch`` with a request to the installation's public endpoint plus ``path``
        (``/?name=Ada``); its Response (404 ``not_handled`` when there is no ``fetch``)."""
        headers = dict(headers or {})
        if json is not None:
            body = _json_body(json)
            headers.setdefault("Content-Type", "application/json")
        if isinstance(body, str):
            body = body.encode()
        url = PUBLIC_ENDPOINT.rstrip("/") + "/" + path.lstrip("/")
        event = {"type": "fetch", "request": {"method": method, "url": url, "headers": headers}}
        answer = self._dispatch(event, body or b"")
        return Response(answer.status, dict(answer.headers), answer.body)

    def render(
        self, component_id: str, *, props=None, state=None, action=None, context=None
    ) -> JSONObject:
        """Render a component (with ``action``: run it first, as a press does): a JSONObject
        with its ``element`` (the markup), ``state`` and ``props``. ``state`` None starts
        from ``initial_state``. An unknown component raises LookupError."""
        event = {"type": "ui_render", "componentId": component_id, "props": props or {}}
        event |= {"state": state, "action": action, "context": context}
        answer = self._dispatch(event)
        data = JSONObject(json.loads(answer.body))
        if answer.status == 404:
            raise LookupError(f"the integration has no component {component_id!r}")
        return data


def _json_body(value) -> bytes:
    return json.dumps(value).encode()
