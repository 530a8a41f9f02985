"""``create_integration`` and ``create_component``: what an integration script declares."""

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field


@dataclass(frozen=True)
class Component:
    """A UI component: ``render(element, context)``, optionally ``initial_state(props)`` and
    ``action(element, action, context)``. Handlers may be plain or async functions."""

    component_id: str
    render: Callable
    initial_state: Callable | None = None
    action: Callable | None = None


@dataclass(frozen=True)
class Integration:
    """What a script binds to its module-level name ``integration``."""

    fetch: Callable | None = None
    components: dict[str, Component] = field(default_factory=dict)
    events: dict[str, Callable] = field(default_factory=dict)
    #: ``visitor_authentication(request, context) -> Response`` (scope ``site:visitor:auth``)
    #: and ``visitor_claims(event, context) -> dict`` (scope ``site:adaptive:write``).
    visitor_authentication: Callable | None = None
    visitor_claims: Callable | None = None

    @property
    def handlers(self) -> list[str]:
        """The names of the visitor handlers it has (``HANDLER_SCOPES``' keys)."""
        return [name for name in HANDLER_SCOPES if getattr(self, name) is not None]


#: The handlers beside ``fetch``, components and events, with the scope each needs to be
#: called at all.
HANDLER_SCOPES = {
    "visitor_authentication": "site:visitor:auth",
    "visitor_claims": "site:adaptive:write",
}


def _check_callable(value, what: str):
    if value is not None and not callable(value):
        raise TypeError(f"{what} must be a function, not {type(value).__name__}")


def create_component(
    component_id: str,
    *,
    render: Callable,
    initial_state: Callable | None = None,
    action: Callable | None = None,
) -> Component:
    """A component, identified by ``component_id`` in the manifest and in ``ui_render``."""
    if not isinstance(component_id, str) or not component_id:
        raise ValueError("component_id must be a non-empty string")
    if render is None:
        raise TypeError(f"component {component_id!r} needs a render function")
    for name, value in (("render", render), ("initial_state", initial_state), ("action", action)):
        _check_callable(value, f"component {component_id!r}: {name}")
    return Component(component_id, render, initial_state, action)


def create_integration(
    fetch: Callable | None = None,
    components: Iterable[Component] = (),
    events: dict[str, Callable] | None = None,
    visitor_authentication: Callable | None = None,
    visitor_claims: Callable | None = None,
) -> Integration:
    """The entrypoint: ``integration = create_integration(fetch=..., components=[...],
    events={"space_view": handler})``. ``visitor_authentication(request, context)`` signs a
    site's visitors in (returns a Response, usually a redirect to the identity provider);
    ``visitor_claims(event, context)`` returns claims to add when a visitor's session starts
    (README, "Visitor authentication")."""
    _check_callable(fetch, "fetch")
    _check_callable(visitor_authentication, "visitor_authentication")
    _check_callable(visitor_claims, "visitor_claims")
    by_id = {}
    for component in components:
        if not isinstance(component, Component):
            raise TypeError("components are made with create_component()")
        if component.component_id in by_id:
            raise ValueError(f"two components have the id {component.component_id!r}")
        by_id[component.component_id] = component
    events = dict(events or {})
    for name, handler in events.items():
        _check_callable(handler, f"the handler of event {name!r}")
    return Integration(fetch, by_id, events, visitor_authentication, visitor_claims)
