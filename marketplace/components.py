"""Integration UI components on the marketplace pages: rendered as HTML forms (their markup
and the form that turns a submission back into the component's actions are the integrations
app's, ``integrations.component_forms``, which a page's blocks use too).

A rendered component is one form. A button submits it with its ``onPress`` action; an input
with an ``onChange`` action dispatches it, with the input's ``name`` and new ``value`` added,
when the form is submitted and the value changed (before the pressed button's action).
"""

from dataclasses import dataclass

from django.http import Http404

from integrations.component_forms import has_change_inputs, page_markup
from integrations.gateway.failures import RuntimeFailure
from integrations.models import ComponentState, Installation
from integrations.selectors import inserted_blocks
from integrations.services.components import component_render

#: Inserted blocks shown (and rendered) on an installation page, newest first.
SHOWN_BLOCK_PREVIEWS = 10


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
        return bool(self.markup) and has_change_inputs(self.markup)


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
