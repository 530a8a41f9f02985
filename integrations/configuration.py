"""The setup flow's rules: a manifest configuration as a JSON Schema, and its validation.

A configuration edit is checked in two steps. Each changed value must fit its property
(right type, one of the ``enum`` options, a known property): otherwise the edit is refused
and nothing is written. The configuration that results is then validated as a whole
(``required`` properties, and checks an integration registers, such as the webhook URL's):
problems there do not refuse the edit but keep the installation ``pending`` with the reasons.
"""

from collections.abc import Callable

from jsonschema import Draft202012Validator

#: Extra checks of a whole configuration, by integration name: (level, configuration) -> reasons.
ConfigurationCheck = Callable[[str, dict], list[dict]]
_CHECKS: dict[str, ConfigurationCheck] = {}


def register_configuration_check(integration_name: str, check: ConfigurationCheck) -> None:
    _CHECKS[integration_name] = check


def definition_for(configurations: dict, level: str) -> dict:
    """The manifest configuration for ``level`` (account, space, site); space falls back to site."""
    definition = configurations.get(level)
    if definition is None and level == "space":
        definition = configurations.get("site")
    return definition or {}


def properties_of(definition: dict) -> dict:
    return definition.get("properties") or {}


def button_properties(definition: dict) -> set[str]:
    return {name for name, prop in properties_of(definition).items() if prop["type"] == "button"}


def property_schema(prop: dict) -> dict:
    kind = prop["type"]
    if kind == "button":
        return {
            "type": "object",
            "properties": {
                "access_token": {"type": "string", "minLength": 1},
                "refresh_token": {"type": ["string", "null"]},
                "expires_at": {"type": ["string", "number", "null"]},
            },
            "required": ["access_token"],
        }
    schema: dict = {"type": kind}
    if "enum" in prop:
        schema["enum"] = list(prop["enum"])
    return schema


def json_schema(definition: dict) -> dict:
    """The JSON Schema of a configuration. A ``componentId`` configuration accepts anything."""
    if "componentId" in definition:
        return {"type": "object"}
    return {
        "type": "object",
        "properties": {
            name: property_schema(prop) for name, prop in properties_of(definition).items()
        },
        "required": list(definition.get("required") or []),
        "additionalProperties": False,
    }


def dropped_properties(definition: dict, configuration: dict) -> list[str]:
    """The properties of ``configuration`` that ``definition`` no longer has (a new version
    dropped them); none for a ``componentId`` configuration, which has no schema."""
    if "componentId" in definition:
        return []
    props = properties_of(definition)
    return sorted(name for name in configuration if name not in props)


def defaults(definition: dict) -> dict:
    return {
        name: prop["default"]
        for name, prop in properties_of(definition).items()
        if "default" in prop
    }


def _describe(error) -> str:
    if error.validator == "type":
        expected = error.validator_value
        expected = " or ".join(expected) if isinstance(expected, list) else expected
        return f"must be a {expected}, not {type(error.instance).__name__}"
    if error.validator == "enum":
        options = ", ".join(repr(option) for option in error.validator_value)
        return f"must be one of {options}"
    if error.validator == "required":
        return "is required"
    if error.validator == "minLength":
        return "must not be empty"
    return error.message


def change_problems(definition: dict, changes: dict) -> dict[str, str]:
    """Problems with the changed values themselves, by property name: these refuse the edit."""
    if "componentId" in definition:
        return {}
    props = properties_of(definition)
    problems = {}
    for name, value in changes.items():
        if value is None:
            continue  # None clears the value, of any property (one a new version dropped too)
        if name not in props:
            known = ", ".join(sorted(props)) or "none"
            problems[name] = f"unknown property (the properties are: {known})"
            continue
        error = next(
            iter(Draft202012Validator(property_schema(props[name])).iter_errors(value)), None
        )
        if error is None:
            continue
        if error.validator == "required":
            missing = [key for key in error.validator_value if key not in error.instance]
            problems[f"{name}.{missing[0]}"] = "is required"
        else:
            where = "".join(f".{part}" for part in error.absolute_path)
            problems[name + where] = _describe(error)
    return problems


def validation_reasons(integration_name: str, level: str, definition: dict, configuration: dict):
    """Why a whole configuration does not validate: a list of {path, message}, empty when valid."""
    reasons = [
        {"path": f"configuration.{name}", "message": "is required"}
        for name in definition.get("required") or []
        if configuration.get(name) is None
    ]
    validator = Draft202012Validator(json_schema(definition))
    for error in sorted(validator.iter_errors(configuration), key=lambda e: list(e.absolute_path)):
        if error.validator != "required" or error.absolute_path:
            path = ".".join(str(part) for part in error.absolute_path)
            reasons.append(
                {"path": f"configuration.{path}".rstrip("."), "message": _describe(error)}
            )
    check = _CHECKS.get(integration_name)
    if check is not None:
        reasons.extend(check(level, configuration))
    return reasons
