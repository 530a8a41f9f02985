"""Run one envelope's event against a loaded integration (inside a worker process).

``dispatch`` answers an ``Answer``: the HTTP status, headers and body the host sends back.
Exceptions from integration code propagate; the worker turns them into error answers.
"""

import asyncio
import inspect
import json
from dataclasses import dataclass, field
from urllib.parse import urlsplit

from .context import Context
from .definition import Integration
from .events import EVENT_CLASSES
from .http_messages import Request, Response
from .jsonobject import JSONObject, wrap


@dataclass
class Answer:
    status: int
    body: bytes
    headers: list[tuple[str, str]] = field(default_factory=list)

    @classmethod
    def json(cls, status: int, data) -> "Answer":
        return cls(status, json.dumps(data).encode(), [("Content-Type", "application/json")])


class IntegrationContractError(TypeError):
    """Integration code returned something the runtime cannot use."""


async def _resolve(value):
    """``value``, awaited for as long as it is awaitable: handlers may be plain or async."""
    while inspect.isawaitable(value):
        value = await value
    return value


class Dispatcher:
    """Calls the handlers of one integration, on one event loop kept for the worker's life
    (made at the first async handler; ``close`` closes it)."""

    def __init__(self, integration: Integration, fetch=None):
        self.integration = integration
        self.loop: asyncio.AbstractEventLoop | None = None
        self.fetch_function = fetch

    def call(self, handler, *args):
        value = handler(*args)
        if not inspect.isawaitable(value):  # a plain handler: no turn of the event loop
            return value
        if self.loop is None:
            self.loop = asyncio.new_event_loop()
        return self.loop.run_until_complete(_resolve(value))

    def close(self) -> None:
        if self.loop is not None:
            self.loop.close()
            self.loop = None

    def dispatch(self, event: dict, environment: dict, fetch_body: bytes | None) -> Answer:
        context = (
            Context(environment, self.fetch_function)
            if self.fetch_function
            else Context(environment)
        )
        event_type = event["type"]
        if event_type == "fetch":
            return self.fetch(event, context, fetch_body or b"")
        if event_type == "ui_render":
            return self.render(event, context)
        if event_type == "visitor_authentication":
            return self.visitor_authentication(event, context, fetch_body or b"")
        if event_type == "visitor_claims":
            return self.visitor_claims(event, context)
        handler = self.integration.events.get(event_type)
        if handler is None:
            return Answer.json(200, {"handled": False})
        self.call(handler, typed_event(event), context)
        return Answer.json(200, {"handled": True})

    def fetch(self, event: dict, context: Context, body: bytes) -> Answer:
        if self.integration.fetch is None:
            return _not_handled("fetch")
        return self.respond(self.integration.fetch, "fetch", event, context, body)

    def visitor_authentication(self, event: dict, context: Context, body: bytes) -> Answer:
        """A site's visitor signing in: the handler gets their request (``location``, the
        site's address to come back to, is in its query) and answers as ``fetch`` does."""
        if self.integration.visitor_authentication is None:
            return _not_handled("visitor_authentication")
        handler = self.integration.visitor_authentication
        return self.respond(handler, "visitor_authentication", event, context, body)

    def visitor_claims(self, event: dict, context: Context) -> Answer:
        """A visitor's session starts: the handler gets the event (``claims``: the token's)
        and returns a dict of claims to add (None: none)."""
        if self.integration.visitor_claims is None:
            return Answer.json(200, {"claims": {}, "handled": False})
        claims = self.call(self.integration.visitor_claims, wrap(event), context)
        if claims is None:
            claims = {}
        if not isinstance(claims, dict):
            raise IntegrationContractError(
                f"visitor_claims must return a dict, not {type(claims).__name__}"
            )
        return Answer.json(200, {"claims": claims, "handled": True})

    def respond(self, handler, name: str, event: dict, context: Context, body: bytes) -> Answer:
        """Call ``handler(request, context)`` with the event's request; its Response."""
        described = event["request"]
        request = Request(
            described["method"],
            described["url"],
            described.get("headers") or {},
            body,
            route=_route(described["url"], context.environment.public_endpoints),
        )
        response = self.call(handler, request, context)
        if not isinstance(response, Response):
            raise IntegrationContractError(
                f"{name} must return a Response, not {type(response).__name__}"
            )
        return Answer(response.status, response.body, _header_list(response.headers))

    def render(self, event: dict, context: Context) -> Answer:
        component_id = event["componentId"]
        component = self.integration.components.get(component_id)
        if component is None:
            return Answer.json(404, {"error": "unknown_component", "componentId": component_id})
        props = event.get("props") or {}
        state = event.get("state")
        if state is None:
            state = (
                self.call(component.initial_state, wrap(props)) if component.initial_state else {}
            )
        element = _element(component_id, props, state, event.get("context"))
        action = event.get("action")
        if action and component.action:
            result = self.call(component.action, element, wrap(action), context) or {}
            if not isinstance(result, dict):
                raise IntegrationContractError(
                    f"action must return a dict, not {type(result).__name__}"
                )
            if "state" in result:
                state = result["state"]
                element = _element(component_id, props, state, event.get("context"))
        markup = self.call(component.render, element, context)
        return Answer.json(200, {"element": markup, "state": state, "props": props})


def typed_event(event: dict) -> JSONObject:
    """The event as its handler receives it: its class in ``docplatform_sdk.events`` (a
    JSONObject, attribute access as ever), or a plain JSONObject for another app's type."""
    kind = EVENT_CLASSES.get(event.get("type"), JSONObject)
    return kind(event)


def _not_handled(name: str) -> Answer:
    message = f"the integration has no {name} handler"
    return Answer.json(404, {"error": "not_handled", "message": message})


def _element(component_id: str, props, state, ui_context) -> JSONObject:
    """The ``element`` a component's handlers receive: ``element.props``, ``element.state``."""
    return JSONObject(componentId=component_id, props=props, state=state, context=ui_context)


def _route(url: str, public_endpoints: list[str]) -> str | None:
    """The path of ``url`` below the first public endpoint it falls under."""
    path = urlsplit(url).path or "/"
    for endpoint in public_endpoints:
        prefix = urlsplit(endpoint).path.rstrip("/")
        if path == prefix or path.startswith(prefix + "/"):
            return path[len(prefix) :] or "/"
    return None


def _header_list(headers) -> list[tuple[str, str]]:
    pairs = [(str(name), str(value)) for name, value in headers.items()]
    for name, value in pairs:
        if any(character in name + value for character in "\r\n"):
            raise IntegrationContractError(f"the response header {name!r} contains a line break")
    return pairs
