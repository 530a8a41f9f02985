"""The checks that run the code: what the manifest promises against what the script declares.

``check`` and ``publish`` load the script once in a sandboxed process (``inspection``: on
the author's machine through ``authoring.localcheck``, on the platform through the runtime
host) and hand its description to ``check_code``, the one home of these rules:

- the code loads (else its error, with the author's file and line: ``main.py:3``);
- it binds a module-level ``integration``;
- every ``blocks`` entry and configuration ``componentId`` has its component;
- every event handler names an event the platform fires (with a did-you-mean), and the
  manifest's scopes grant it (else a warning naming the scope to add); ``ui_render`` and
  ``fetch`` are never events;
- a ``completion_url`` or a button's ``callback_url`` has a ``fetch`` handler to answer it;
- a ``visitor_authentication`` or ``visitor_claims`` handler has its scope
  (``site:visitor:auth``, ``site:adaptive:write``; else a warning naming it);
- and without a ``script``, none of the above is asked of the manifest.
"""

from dataclasses import dataclass

from .definition import HANDLER_SCOPES
from .manifest import EVENT_SCOPES, CheckResult, Manifest, Problem
from .manifest.base import hint, index, join


class DescriptionError(ValueError):
    """What came back from loading the code is not a description."""


@dataclass(frozen=True)
class Description:
    """What loading the code gave: an error (``where`` and ``error``), no integration
    (``loaded`` with ``found``: what ``integration`` was bound to, if anything), or the
    integration's event names, component ids and whether it has ``fetch``."""

    loaded: bool
    events: tuple[str, ...] = ()
    components: tuple[str, ...] = ()
    fetch: bool = False
    handlers: tuple[str, ...] = ()
    integration: bool = False
    found: str | None = None
    where: str | None = None
    error: str | None = None

    @classmethod
    def failed(cls, error: str, where: str | None = None) -> "Description":
        return cls(loaded=False, error=error, where=where)

    @classmethod
    def from_json(cls, data) -> "Description":
        """The description ``inspection`` printed; DescriptionError when it is not one."""
        if not isinstance(data, dict):
            raise DescriptionError("the description is not an object")
        if "error" in data:
            error = data["error"]
            if not isinstance(error, dict) or not isinstance(error.get("message"), str):
                raise DescriptionError("the error has no message")
            return cls.failed(error["message"], _optional_text(error.get("where")))
        integration = data.get("integration")
        if integration is None:
            return cls(loaded=True, found=_optional_text(data.get("found")))
        if not isinstance(integration, dict):
            raise DescriptionError("integration is not an object")
        return cls(
            loaded=True,
            integration=True,
            events=_texts(integration.get("events")),
            components=_texts(integration.get("components")),
            fetch=integration.get("fetch") is True,
            handlers=_texts(integration.get("handlers", [])),
        )


#: The code wrote something else than a description where only the loader writes.
GARBLED = "loading it wrote something that is not a description of the code"


def description_from(data) -> Description:
    """The description in ``data``, else a failure of the code (only code that writes where
    the loader writes can garble it)."""
    try:
        return Description.from_json(data)
    except DescriptionError:
        return Description.failed(GARBLED)


def _optional_text(value) -> str | None:
    if value is None or isinstance(value, str):
        return value
    raise DescriptionError("a text field is not text")


def _texts(value) -> tuple[str, ...]:
    if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
        raise DescriptionError("a list of names is not a list of text")
    return tuple(value)


def check_code(manifest: Manifest, description: Description | None) -> CheckResult:
    """The problems of ``manifest`` against its code's ``description`` (None: the manifest
    has no script). Errors refuse the integration; warnings are shown."""
    errors: list[Problem] = []
    warnings: list[Problem] = []
    script = manifest.script.path if manifest.script is not None else None
    if script is None:
        errors += _needs_a_script(manifest)
    elif description is None:
        raise ValueError("a manifest with a script is checked against its code's description")
    elif not description.loaded:
        errors.append(Problem(description.where or script, description.error or "did not load"))
    elif not description.integration:
        errors.append(Problem(script, _no_integration(description.found)))
    else:
        errors += _components(manifest, description, script)
        errors += _fetch_paths(manifest, description, script)
        event_errors, warnings = _events(manifest, description, script)
        errors += event_errors
        warnings += _handlers(manifest, description, script)
    return CheckResult(errors=errors, warnings=warnings)


def _handlers(manifest: Manifest, description: Description, script: str) -> list[Problem]:
    """A visitor handler the manifest's scopes never let the platform call."""
    return [
        Problem(
            script,
            f"handler {name}: the manifest's scopes do not grant it; add {HANDLER_SCOPES[name]}",
        )
        for name in description.handlers
        if name in HANDLER_SCOPES and HANDLER_SCOPES[name] not in manifest.scopes
    ]


def combined(result: CheckResult, code: CheckResult) -> CheckResult:
    """The manifest's check and its code's check as one result."""
    errors = [*result.errors, *code.errors]
    return CheckResult(
        errors=errors,
        warnings=[*result.warnings, *code.warnings],
        manifest=result.manifest if not errors else None,
    )


def _no_integration(found: str | None) -> str:
    if found is None:
        return "defines no module-level `integration`: bind integration = create_integration(...)"
    return f"its module-level `integration` is {found}, not what create_integration(...) returns"


def _component_uses(manifest: Manifest):
    """(field path, component id) of every block and configuration component."""
    for position, block in enumerate(manifest.blocks):
        yield join(index("blocks", position), "id"), block["id"]
    for level, configuration in manifest.configurations.items():
        if "componentId" in configuration:
            yield join(join("configurations", level), "componentId"), configuration["componentId"]


def _fetch_paths(manifest: Manifest, description: Description | None, script: str | None):
    """(field path, what) of every path the script's fetch handler must answer; problems."""
    problems = []
    for level, configuration in manifest.configurations.items():
        for name, definition in configuration.get("properties", {}).items():
            for key in ("completion_url", "callback_url"):
                if key not in definition:
                    continue
                path = join(join(join(join("configurations", level), "properties"), name), key)
                if script is None:
                    problems.append(
                        Problem(
                            path,
                            "no code answers it: the manifest has no script (its fetch "
                            f"handler answers {definition[key]})",
                        )
                    )
                elif description is not None and not description.fetch:
                    problems.append(
                        Problem(
                            path,
                            f"{script} has no fetch handler to answer it: pass "
                            "create_integration(fetch=...)",
                        )
                    )
    return problems


def _needs_a_script(manifest: Manifest) -> list[Problem]:
    problems = [
        Problem(
            path,
            f"no component renders {component!r}: the manifest has no script (add "
            f"script: main.py with create_component({component!r}, render=...))",
        )
        for path, component in _component_uses(manifest)
    ]
    return problems + _fetch_paths(manifest, None, None)


def _components(manifest: Manifest, description: Description, script: str) -> list[Problem]:
    known = description.components
    return [
        Problem(
            path,
            f"{script} has no component {component!r} (add create_component({component!r}, "
            f"render=...) to its components){hint(component, known)}",
        )
        for path, component in _component_uses(manifest)
        if component not in known
    ]


def _events(manifest: Manifest, description: Description, script: str):
    errors, warnings = [], []
    for name in description.events:
        never = f"the handler for {name!r} is never called"
        if name == "ui_render":
            errors.append(
                Problem(
                    script,
                    f"{never}: components are the way: create_component('my-block', "
                    "render=...) in create_integration(components=[...])",
                )
            )
        elif name == "fetch":
            errors.append(Problem(script, f"{never}: requests go to create_integration(fetch=...)"))
        elif name not in EVENT_SCOPES:
            suggestion = hint(name, EVENT_SCOPES)
            errors.append(Problem(script, f"{never}: the platform fires no such event{suggestion}"))
        elif EVENT_SCOPES[name] is not None and EVENT_SCOPES[name] not in manifest.scopes:
            warnings.append(
                Problem(
                    script,
                    f"handler for {name}: the manifest's scopes do not grant it; "
                    f"add {EVENT_SCOPES[name]}",
                )
            )
    return errors, warnings
