"""A quick insert block with state and actions, and the screen that configures it.

``counter`` is the block: each inserted counter keeps its own count (its state), starting at
its ``start`` prop. ``counter-settings`` is the space's configuration screen: its inputs
edit a draft (the platform adds each input's ``name`` and new ``value`` to the onChange
action), and Save writes the draft to the space installation's configuration through the
platform API, where every counter of the space reads it.
"""

from docplatform_sdk import (
    block,
    button,
    create_component,
    create_integration,
    select,
    switch,
    text,
    text_input,
)

DEFAULT_SETTINGS = {"label": "Count", "step": 1, "show_reset": True}
STEPS = ["1", "2", "5", "10"]


def saved_settings(context) -> dict:
    """The settings as saved in the installation's configuration, defaults filled in."""
    environment = context.environment
    installation = environment.spaceInstallation or environment.installation
    configuration = installation.configuration if installation else {}
    return {name: configuration.get(name, value) for name, value in DEFAULT_SETTINGS.items()}


# --- The counter block ------------------------------------------------------------------


def counter_initial_state(props):
    return {"count": int(props.get("start", 0))}


def counter_action(element, action, context):
    if action.action == "increment":
        step = int(saved_settings(context)["step"])
        return {"state": {"count": element.state["count"] + step}}
    if action.action == "reset":
        return {"state": counter_initial_state(element.props)}
    return {}  # not handled: the count stays as it is


def counter_render(element, context):
    settings = saved_settings(context)
    buttons = [button("Increment", on_press={"action": "increment"})]
    if settings["show_reset"]:
        buttons.append(button("Reset", on_press={"action": "reset"}))
    return block(text(f"{settings['label']}: {element.state['count']}"), *buttons)


# --- The configuration screen -----------------------------------------------------------


def settings_initial_state(props):
    return {"draft": {}, "saved": False}


def settings_action(element, action, context):
    if action.action == "edit" and action.get("name") in DEFAULT_SETTINGS:
        draft = {**element.state["draft"], action.name: action.value}
        return {"state": {"draft": draft, "saved": False}}
    if action.action == "save":
        settings = {**saved_settings(context), **element.state["draft"]}
        settings["step"] = int(settings["step"])
        context.api.update_installation(configuration=settings)
        return {"state": {"draft": settings, "saved": True}}
    return {}


def settings_render(element, context):
    values = {**saved_settings(context), **element.state["draft"]}
    edit = {"action": "edit"}
    children = [
        text("These settings apply to every counter inserted in this space."),
        text_input("label", label="Label", value=values["label"], on_change=edit),
        select("step", STEPS, label="Each press adds", value=str(values["step"]), on_change=edit),
        switch(
            "show_reset", label="Show a Reset button", value=values["show_reset"], on_change=edit
        ),
        button("Save", on_press={"action": "save"}),
    ]
    if element.state["saved"]:
        children.append(text("Saved."))
    return block(*children)


integration = create_integration(
    components=[
        create_component(
            "counter",
            initial_state=counter_initial_state,
            action=counter_action,
            render=counter_render,
        ),
        create_component(
            "counter-settings",
            initial_state=settings_initial_state,
            action=settings_action,
            render=settings_render,
        ),
    ]
)
