"""The UI markup that components render: plain JSON objects, ``{"type": ..., ...}``.

Interactive elements carry an action object (``{"action": "<name>", ...}``) that the platform
dispatches to the component's ``action`` handler: a button's ``onPress``, an input's
``onChange``. Inputs are named; the platform adds the input's ``name`` and new ``value`` to
the action it dispatches.
"""


def _element(element_type: str, **fields) -> dict:
    return {
        "type": element_type,
        **{key: value for key, value in fields.items() if value is not None},
    }


def _action(action: dict | None, element_type: str) -> dict | None:
    if action is not None and not (
        isinstance(action, dict) and isinstance(action.get("action"), str)
    ):
        raise ValueError(f'{element_type}: an action is a dict like {{"action": "name"}}')
    return action


def block(*children: dict) -> dict:
    """A container of elements."""
    return _element("block", children=list(children))


def text(content: str) -> dict:
    """A paragraph of text."""
    return _element("text", text=content)


def button(label: str, on_press: dict) -> dict:
    """A button dispatching ``on_press`` (``{"action": "name", ...}``) when pressed."""
    return _element("button", label=label, onPress=_action(on_press, "button"))


def link(label: str, url: str) -> dict:
    """A hyperlink."""
    return _element("link", label=label, url=url)


def text_input(
    name: str,
    label: str | None = None,
    value: str = "",
    placeholder: str | None = None,
    on_change: dict | None = None,
) -> dict:
    """A one-line text field."""
    return _element(
        "text_input",
        name=name,
        label=label,
        value=value,
        placeholder=placeholder,
        onChange=_action(on_change, "text_input"),
    )


def select(
    name: str,
    options: list,
    label: str | None = None,
    value: str | None = None,
    on_change: dict | None = None,
) -> dict:
    """A dropdown; ``options`` are strings or ``{"value": ..., "label": ...}`` dicts."""
    choices = [
        option if isinstance(option, dict) else {"value": option, "label": option}
        for option in options
    ]
    return _element(
        "select",
        name=name,
        label=label,
        options=choices,
        value=value,
        onChange=_action(on_change, "select"),
    )


def switch(
    name: str, label: str | None = None, value: bool = False, on_change: dict | None = None
) -> dict:
    """An on/off toggle."""
    return _element(
        "switch", name=name, label=label, value=value, onChange=_action(on_change, "switch")
    )
