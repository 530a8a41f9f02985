"""Integration UI components on the marketplace pages: rendered as HTML forms, and the form
that turns a submission back into the component's actions.

A rendered component is one form. A button submits it with its ``onPress`` action; an input
with an ``onChange`` action dispatches it, with the input's ``name`` and new ``value`` added,
when the form is submitted and the value changed (before the pressed button's action).
"""

import json
from dataclasses import dataclass
from urllib.parse import urlsplit

from django import forms
from django.http import Http404

from integrations.gateway.failures import RuntimeFailure
from integrations.models import ComponentState, Installation
from integrations.selectors import inserted_blocks
from integrations.services.components import INSTANCE_RE, component_render
from integrations.services.markup import is_action

#: Inserted blocks shown (and rendered) on an installation page, newest first.
SHOWN_BLOCK_PREVIEWS = 10
WEB_SCHEMES = ("http", "https")
INPUT_TYPES = ("text_input", "select", "switch")


@dataclass(frozen=True)
class ComponentPanel:
    """One component instance as the page shows it: its markup, or why there is none."""

    component_id: str
    instance: str
    markup: dict | None = None
    error: str | None = None

    @property
    def has_inputs(self) -> bool:
        """Whether submitting the form may dispatch onChange actions."""
        return bool(self.markup) and _has_change_inputs(self.markup)


def component_panel(installation: Installation, component_id: str, instance: str) -> ComponentPanel:
    """Render the instance now; a failure is shown in its place."""
    try:
        rendered = component_render(
            installation=installation, component_id=component_id, instance=instance
        )
    except RuntimeFailure as error:
        return ComponentPanel(component_id, instance, error=error.message)
    except Http404 as error:
        return ComponentPanel(component_id, instance, error=str(error))
    return ComponentPanel(component_id, instance, markup=page_markup(rendered.element, instance))


def configuration_screen(installation: Installation, definition: dict) -> ComponentPanel | None:
    """The configuration screen of a ``componentId`` configuration, rendered."""
    component_id = definition.get("componentId")
    if component_id is None:
        return None
    return component_panel(installation, component_id, ComponentState.CONFIGURATION_INSTANCE)


def block_panel(installation: Installation) -> dict | None:
    """A space installation's quick insert blocks, and previews of those inserted."""
    blocks = installation.integration.blocks
    if installation.level != Installation.Level.SPACE or not blocks:
        return None
    inserted = inserted_blocks(installation)[:SHOWN_BLOCK_PREVIEWS]
    titles = {block["id"]: block["title"] for block in blocks}
    return {
        "blocks": blocks,
        "previews": [
            {
                "title": titles[row.component_id],
                "panel": component_panel(installation, row.component_id, row.instance),
            }
            for row in inserted
        ],
    }


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


def _has_change_inputs(element: dict) -> bool:
    if element["type"] == "block":
        return any(_has_change_inputs(child) for child in element["children"])
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
