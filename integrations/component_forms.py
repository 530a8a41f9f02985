"""A component's markup as a page template renders it, and the form that turns a submission
back into the component's actions: the marketplace's component pages and a documentation
page's blocks (``page_blocks``) alike.

A rendered component is one form. A button submits it with its ``onPress`` action; an input
with an ``onChange`` action dispatches it, with the input's ``name`` and new ``value`` added,
when the form is submitted and the value changed (before the pressed button's action).
"""

import json
from urllib.parse import urlsplit

from django import forms

from .services.components import INSTANCE_RE
from .services.markup import is_action

WEB_SCHEMES = ("http", "https")
INPUT_TYPES = ("text_input", "select", "switch")


# --- Markup as the page template renders it -------------------------------------------------


def page_markup(element: dict, instance: str) -> dict:
    """``element`` with what the template needs: each action as JSON (a button's value, an
    input's hidden description), input ids unique on the page, links only to the web."""
    kind = element["type"]
    shown = {**element}
    if kind == "block":
        shown["children"] = [page_markup(child, instance) for child in element["children"]]
    elif kind == "button":
        shown["action_json"] = json.dumps(element["onPress"])
    elif kind == "link":
        shown["href"] = element["url"] if urlsplit(element["url"]).scheme in WEB_SCHEMES else None
    elif kind in INPUT_TYPES:
        shown["dom_id"] = f"component-{instance}-{element['name']}"
        shown["field"] = value_field(element["name"])
        if kind == "select":
            shown["options"] = [
                {**option, "text": str(option["value"])} for option in element["options"]
            ]
            shown["value_text"] = None if element.get("value") is None else str(element["value"])
        if element.get("onChange"):
            shown["description_json"] = json.dumps(
                {
                    "type": kind,
                    "name": element["name"],
                    "value": element.get("value"),
                    "onChange": element["onChange"],
                    **({"options": _option_values(element)} if kind == "select" else {}),
                }
            )
    return shown


def _option_values(select: dict) -> list:
    return [option["value"] for option in select["options"]]


def value_field(name: str) -> str:
    """The form field that carries an input's value."""
    return f"value-{name}"


def has_change_inputs(element: dict) -> bool:
    if element["type"] == "block":
        return any(has_change_inputs(child) for child in element["children"])
    return "description_json" in element


# --- A submitted component form -------------------------------------------------------------


class ComponentInstanceForm(forms.Form):
    instance = forms.RegexField(INSTANCE_RE)


class ComponentActionForm(ComponentInstanceForm):
    """A component's form as submitted: which instance, the pressed button's action
    (``press``), and the inputs that have an onChange (``input``, one description each)."""

    MALFORMED = "The component's form is malformed; reload the page and try again."

    press = forms.CharField(required=False, max_length=10_000)

    def clean(self):
        cleaned = super().clean()
        try:
            actions = [
                action
                for description in self.data.getlist("input")
                if (action := self._change_action(json.loads(description))) is not None
            ]
            if cleaned.get("press"):
                actions.append(_checked_action(json.loads(cleaned["press"])))
        except (ValueError, TypeError, KeyError) as error:
            raise forms.ValidationError(self.MALFORMED) from error
        cleaned["actions"] = actions
        return cleaned

    def _change_action(self, description: dict) -> dict | None:
        """The input's onChange action with its name and new value, when the value changed."""
        kind, name = description["type"], description["name"]
        submitted = self.data.get(value_field(name))
        if kind == "switch":
            value = submitted is not None
        elif kind == "select":
            matching = [v for v in description["options"] if str(v) == submitted]
            if not matching:
                return None
            value = matching[0]
        elif kind == "text_input":
            value = submitted or ""
        else:
            raise ValueError(f"not an input: {kind}")
        if value == description["value"]:
            return None
        return {**_checked_action(description["onChange"]), "name": name, "value": value}


def _checked_action(action) -> dict:
    if not is_action(action):
        raise ValueError("not an action")
    return action
