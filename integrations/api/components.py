"""Render an installation's UI components and dispatch their actions.

Members of the installing organization, and the installation's own token, may call it;
anyone else gets 404. The component must be one the manifest names: a quick insert block
(``blocks[].id``) or a configuration screen (``componentId``), whose actions and props
configure the installation: its organization's admins only (403 for its other people).
"""

from django.http import Http404
from drf_spectacular.utils import (
    OpenApiExample,
    OpenApiResponse,
    extend_schema,
    extend_schema_field,
    inline_serializer,
)
from rest_framework import serializers
from rest_framework.exceptions import NotFound
from rest_framework.response import Response
from rest_framework.settings import api_settings
from rest_framework.views import APIView

from docplatform.api.permissions import IsPerson
from docplatform.api.schema import service_errors

from ..authentication import IsInstallation, is_installation
from ..endpoint_selectors import installation_visible_for_call
from ..gateway.call_log import after_answer, answer_held
from ..gateway.failures import STATUS, RuntimeFailure
from ..models import ComponentState, Installation
from ..policies import act_check, component_action
from ..selectors import block_ids, configuration_screen_ids
from ..services.components import INSTANCE_RE, component_render, is_instance_name
from .failures import failure_response


@extend_schema_field(
    {
        "type": "object",
        "required": ["action"],
        "properties": {"action": {"type": "string", "minLength": 1}},
        "additionalProperties": True,
    }
)
class ActionField(serializers.DictField):
    """``{"action": "<name>", ...}``: what a button's onPress or an input's onChange carries."""


class ComponentRenderInput(serializers.Serializer):
    """The request's body, as the schema describes it: the service checks it
    (``services.components``, each error naming its field), so no serializer runs on the
    path every block's action takes."""

    instance = serializers.RegexField(
        INSTANCE_RE,
        required=False,
        help_text="The component instance: a block instance's id chosen by the caller. "
        'Defaults to "configuration" for a configuration screen; a block needs one.',
    )
    props = serializers.DictField(
        required=False,
        help_text="The instance's props (replacing the stored ones); default: those stored.",
    )
    action = ActionField(
        required=False,
        help_text="An action to dispatch before rendering, as the markup's onPress or "
        "onChange gives it; for an input, with its name and new value added.",
    )


class ComponentRenderOutput(serializers.Serializer):
    """The answer, as the schema describes it (the view answers a dict)."""

    instance = serializers.CharField()
    element = serializers.DictField(help_text='The UI markup: {"type": "block", ...}.')
    state = serializers.DictField(help_text="The instance's state, as now stored.")


ComponentErrorResponse = inline_serializer(
    "ComponentErrorResponse",
    {
        "type": serializers.CharField(help_text="client_error (4xx) or server_error (5xx)."),
        "errors": inline_serializer(
            "ComponentErrorDetail",
            {
                "code": serializers.CharField(
                    help_text="The gateway's failure codes: " + ", ".join(sorted(STATUS)) + "."
                ),
                "detail": serializers.CharField(),
                "attr": serializers.CharField(allow_null=True),
            },
            many=True,
        ),
    },
)


#: The quick-insert-counter example's counter block, rendered.
COUNTER_ELEMENT = {
    "type": "block",
    "children": [
        {"type": "text", "text": "Count: 3"},
        {"type": "button", "label": "Increment", "onPress": {"action": "increment"}},
        {"type": "button", "label": "Reset", "onPress": {"action": "reset"}},
    ],
}
RENDER_EXAMPLES = [
    OpenApiExample(
        "Render a block instance",
        value={"instance": "Xb2k9QfLw0aZ", "props": {"start": 0}},
        request_only=True,
    ),
    OpenApiExample(
        "Press a button",
        value={"instance": "Xb2k9QfLw0aZ", "action": {"action": "increment"}},
        request_only=True,
    ),
    OpenApiExample(
        "Change an input of a configuration screen",
        value={"action": {"action": "edit", "name": "label", "value": "Visits"}},
        request_only=True,
    ),
    OpenApiExample(
        "The instance, rendered",
        value={"instance": "Xb2k9QfLw0aZ", "element": COUNTER_ELEMENT, "state": {"count": 3}},
        response_only=True,
    ),
]


def error_response(description: str) -> OpenApiResponse:
    return OpenApiResponse(ComponentErrorResponse, description=description)


def caller_installation(
    request, installation_id: str, instance_of: tuple[str, str] | None = None
) -> Installation:
    """The installation, for a member of its organization or for its own token; for a
    person, with ``instance_of`` (a component's id, an instance's name) its stored instance
    read with it (``endpoint_selectors.stored_instance_of``)."""
    if not is_installation(request.user):
        installation = installation_visible_for_call(
            request.user, installation_id, instance_of=instance_of
        )
        if installation is None:
            raise Http404
        return installation
    if request.auth.pk != installation_id:
        raise Http404
    return request.auth


def default_instance(installation: Installation, component_id: str) -> str:
    """A configuration screen's instance; a block's instance is the caller's to name."""
    integration = installation.integration
    if component_id in block_ids(integration) and component_id not in configuration_screen_ids(
        integration
    ):
        raise serializers.ValidationError({"instance": ["give the block instance's id"]})
    return ComponentState.CONFIGURATION_INSTANCE


@service_errors("instance", "props", "action")
class ComponentRenderApi(APIView):
    """Render a component instance, after dispatching ``action`` when one is given. An action
    whose result carries a state replaces the instance's state; an unhandled one leaves it.
    A failing component (an error, a timeout, a crash) changes nothing: 502, 503 or 504;
    a paused installation, or another action on the instance meanwhile: 409."""

    permission_classes = [IsPerson | IsInstallation]

    @extend_schema(
        operation_id="installation_component_render",
        summary="Render a component instance, after dispatching an action",
        request=ComponentRenderInput,
        responses={
            200: ComponentRenderOutput,
            409: error_response("The installation is paused, or the instance changed meanwhile."),
            502: error_response("The component failed: an error, a crash, an invalid answer."),
            503: error_response("The runtime is busy."),
            504: error_response("The component did not answer in time."),
        },
        examples=RENDER_EXAMPLES,
    )
    def post(self, request, installation_id, component_id):
        body = request.data
        asked = body.get("instance") if isinstance(body, dict) else None
        # The instance's stored row read with the installation (a configuration screen's
        # when none is named: ``default_instance``); a name the service refuses is not read.
        asked = asked or ComponentState.CONFIGURATION_INSTANCE
        instance_of = (component_id, asked) if is_instance_name(asked) else None
        installation = caller_installation(request, installation_id, instance_of)
        if not isinstance(body, dict):
            raise serializers.ValidationError(
                {api_settings.NON_FIELD_ERRORS_KEY: ["the body must be a JSON object"]}
            )
        props, action = body.get("props"), body.get("action")
        if action is not None or props is not None:
            acting = component_action(installation.integration, component_id)
            act_check(request.user, acting, installation)
        instance = body.get("instance") or default_instance(installation, component_id)
        with answer_held() as held:  # the log line, the markup kept: once the answer is sent
            try:
                rendered = component_render(
                    installation=installation,
                    component_id=component_id,
                    instance=instance,
                    props=props,
                    action=action,
                )
            except RuntimeFailure as failure:
                return after_answer(failure_response(failure), held)
            except Http404 as error:  # the component, not the installation: say which
                raise NotFound(str(error)) from error
        answer = {
            "instance": rendered.instance,
            "element": rendered.element,
            "state": rendered.state,
        }
        return after_answer(Response(answer), held)
