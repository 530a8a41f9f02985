"""Configuration values typed on a command line (``--set KEY=VALUE``), read by their
property's type in the manifest's configuration. Pure Python: the console script and
``manage.py integration`` both read values this way."""

import json

BOOLEAN_WORDS = {"true": True, "yes": True, "on": True, "1": True}
BOOLEAN_WORDS.update({"false": False, "no": False, "off": False, "0": False})


def value_from_text(definition: dict, name: str, text: str):
    """A configuration value typed on a command line, read by its property's type.

    An empty text unsets the property. Raises ValueError with the reason for a text that
    does not read as the property's type; unknown properties are left to the setup flow.
    """
    prop = (definition.get("properties") or {}).get(name)
    if text == "":
        return None
    if prop is None or prop["type"] == "string":
        return text
    if prop["type"] == "number":
        try:
            return int(text)
        except ValueError:
            try:
                return float(text)
            except ValueError:
                raise ValueError(f"{text!r} is not a number") from None
    if prop["type"] == "boolean":
        if text.lower() not in BOOLEAN_WORDS:
            raise ValueError(f"{text!r} is not a yes/no value (true, false, yes, no, on, off)")
        return BOOLEAN_WORDS[text.lower()]
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        raise ValueError("give the credentials as a JSON object") from None


def values_from_texts(definition: dict, items: list[str]) -> tuple[dict, dict[str, list[str]]]:
    """``KEY=VALUE`` texts -> (values by key, problems by ``configuration.KEY``).
    ValueError names an item that is not ``KEY=VALUE``."""
    changes, problems = {}, {}
    for item in items:
        key, sep, text = item.partition("=")
        if not sep or not key:
            raise ValueError(f"--set {item}: give KEY=VALUE")
        try:
            changes[key] = value_from_text(definition, key, text)
        except ValueError as exc:
            problems[f"configuration.{key}"] = [str(exc)]
    return changes, problems
