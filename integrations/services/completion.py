"""Options of a ``string`` property with a ``completion_url``, asked of the integration.

The platform sends a ``GET {installation publicEndpoint}{completion_url}`` as a ``fetch`` event
and expects JSON ``[{"value": ..., "label": ...}]`` (DESIGN.md); any other answer, or an
integration that fails, is reported as a ``RuntimeFailure`` (the gateway's taxonomy) with the
reason.
"""

import json
from dataclasses import dataclass

from django.core.exceptions import ValidationError
from django.http import Http404

from .. import configuration as config_rules
from ..gateway.client import call_runtime
from ..gateway.envelopes import completion_event
from ..gateway.failures import ClientFault, IntegrationFault, RuntimeFailure
from ..models import Installation
from ..policies import configuration_definition, is_paused, runnable_version

MAX_OPTIONS = 1000
MAX_OPTION_LENGTH = 500
MAX_ANSWER_BYTES = 512 * 1024
OPTION_KEYS = {"value", "label"}


@dataclass(frozen=True)
class Completion:
    """What a configuration form gets for one property: the options, or why there are none."""

    options: list[dict]
    problem: str = ""


def completion_urls(installation: Installation) -> dict[str, str]:
    """The installation's properties that take their options from the integration: name -> path."""
    definition = configuration_definition(installation)
    return {
        name: prop["completion_url"]
        for name, prop in config_rules.properties_of(definition).items()
        if prop.get("type") == "string" and prop.get("completion_url")
    }


def options_from_answer(body: bytes) -> list[dict]:
    """The options in an integration's answer; ValueError says what is wrong with it."""
    if len(body) > MAX_ANSWER_BYTES:
        raise ValueError(f"the answer is larger than {MAX_ANSWER_BYTES // 1024} KB")
    try:
        options = json.loads(body)
    except (UnicodeDecodeError, json.JSONDecodeError):
        raise ValueError("the answer is not JSON") from None
    if not isinstance(options, list):
        raise ValueError('the answer is not a JSON list of {"value", "label"} objects')
    if len(options) > MAX_OPTIONS:
        raise ValueError(f"the answer lists {len(options)} options; at most {MAX_OPTIONS}")
    seen = set()
    for position, option in enumerate(options):
        where = f"option {position}"
        if not isinstance(option, dict) or set(option) != OPTION_KEYS:
            raise ValueError(f'{where} is not an object with exactly "value" and "label"')
        for key in ("value", "label"):
            text = option[key]
            if not isinstance(text, str) or not text.strip():
                raise ValueError(f"{where}: {key} must be a non-empty string")
            if len(text) > MAX_OPTION_LENGTH:
                raise ValueError(f"{where}: {key} is longer than {MAX_OPTION_LENGTH} characters")
        if option["value"] in seen:
            raise ValueError(f"{where}: the value {option['value']!r} is listed twice")
        seen.add(option["value"])
    return options


def completion_options(*, installation: Installation, property_name: str) -> list[dict]:
    """Ask the integration for the options of ``property_name``.

    Raises Http404 for an unknown property, ValidationError for one without a
    ``completion_url``, and a RuntimeFailure when the integration gives no valid options.
    """
    definition = configuration_definition(installation)
    if property_name not in config_rules.properties_of(definition):
        raise Http404("No such configuration property.")
    path = completion_urls(installation).get(property_name)
    if path is None:
        raise ValidationError(
            {"property": [f"{property_name} has no completion_url: its options are not asked"]}
        )
    if is_paused(installation):
        raise ClientFault("installation_paused", "the installation is paused")
    version = runnable_version(installation.integration, installation)
    if version is None:
        raise ClientFault("no_script", "the integration has no code to run")

    def read(answer) -> list[dict]:
        if answer.status != 200:
            reason = f"the integration answered HTTP {answer.status} on {path}"
            message = _message_in(answer.body)
            raise IntegrationFault("invalid_answer", f"{reason}: {message}" if message else reason)
        try:
            return options_from_answer(answer.body)
        except ValueError as error:
            raise IntegrationFault(
                "invalid_answer", f"the integration's answer on {path} is invalid: {error}"
            ) from error

    return call_runtime(
        completion_event(installation, path),
        version=version,
        installation=installation,
        kind="completion",
        read=read,
    )


def _message_in(body: bytes) -> str:
    """The ``message`` of an integration's JSON error answer, shortened; else empty."""
    try:
        message = json.loads(body[:MAX_ANSWER_BYTES]).get("message")
    except (UnicodeDecodeError, json.JSONDecodeError, AttributeError):
        return ""
    return message[:200] if isinstance(message, str) else ""


def installation_completions(*, installation: Installation) -> dict[str, Completion]:
    """The options of every property with a ``completion_url``, or why they are missing."""
    completions = {}
    for name in completion_urls(installation):
        try:
            completions[name] = Completion(
                completion_options(installation=installation, property_name=name)
            )
        except RuntimeFailure as failure:
            completions[name] = Completion([], problem=failure.message)
    return completions
