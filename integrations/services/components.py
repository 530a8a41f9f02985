"""UI components: rendered by the integration's code in the runtime, their state kept here.

Each component instance (an installation's configuration screen, or one block inserted from
the quick insert menu) has its own props and state. ``component_render`` sends one
``ui_render`` event: no action renders; an action goes to the component's ``action``
handler, whose result with ``state`` replaces the state before the component renders again;
``{}`` (not handled) leaves it as it was. A failing component changes nothing.
"""

import hashlib
import json
import re
from concurrent.futures import ThreadPoolExecutor, wait
from dataclasses import dataclass

from django.core.cache import cache
from django.core.exceptions import ValidationError
from django.db import IntegrityError, transaction
from django.db.models import F
from django.http import Http404
from django.utils import timezone

from docplatform.queries import Prepared, stand_in_values, stand_ins

from ..endpoint_selectors import installation_for_call
from ..environment import environment_for
from ..gateway.client import RuntimeCall, call_runtime
from ..gateway.envelopes import ui_render_event
from ..gateway.failures import ClientFault, IntegrationFault, RuntimeFailure
from ..models import ComponentState, Installation, Integration
from ..policies import is_paused, runnable_version, running_version
from ..selectors import manifest_component_ids
from .markup import is_action, markup_problem

INSTANCE_RE = re.compile(r"[A-Za-z0-9_-]{1,64}")
MAX_JSON_BYTES = 64 * 1024


@dataclass(frozen=True)
class RenderedComponent:
    instance: str
    element: dict
    state: dict
    props: dict


def component_render(
    *,
    installation: Installation,
    component_id: str,
    instance: str,
    props: dict | None = None,
    action: dict | None = None,
) -> RenderedComponent:
    """Render one component instance, dispatching ``action`` first when given; store its state.

    ``props`` replace the instance's stored props (none stored: ``{}``); the stored state is
    sent along, or none for a new instance, whose state the component's ``initial_state``
    makes. Raises Http404 for a component the manifest does not name, ValidationError for bad
    input, a RuntimeFailure (the gateway's taxonomy) when the component cannot be rendered:
    ``installation_paused``, ``conflict`` (another action changed the instance meanwhile),
    ``invalid_answer``, ``runtime_unavailable`` and the runtime host's failures. Nothing is
    stored then.
    """
    _check_input(instance=instance, props=props, action=action)
    installation = _loaded_for_call(installation)
    version = _renderable_version(installation, component_id)
    stored = _stored_states([ComponentRequest(installation, component_id, instance)]).get(
        (installation.pk, component_id, instance)
    )
    if props is None:
        props = stored.props if stored else {}
    event = ui_render_event(
        installation,
        component_id=component_id,
        props=props,
        state=stored.state if stored else None,
        action=action,
        context=_ui_context(installation, instance),
    )
    element, state = call_runtime(
        event, version=version, installation=installation, read=_rendered(component_id)
    )
    if stored is None or (stored.props, stored.state) != (props, state):
        _store(installation, component_id, instance, stored, props=props, state=state)
    request = ComponentRequest(installation, component_id, instance, props)
    cache.set(_cache_key(version, request, props, state), element, BLOCK_CACHE_SECONDS)
    return RenderedComponent(instance=instance, element=element, state=state, props=props)


@dataclass(frozen=True)
class ComponentRequest:
    """One component instance to render without an action (a block of a page)."""

    installation: Installation
    component_id: str
    instance: str
    props: dict | None = None


#: Renders of several blocks run here at once; each thread only waits on the runtime host.
_render_pool = ThreadPoolExecutor(max_workers=16, thread_name_prefix="component-render")


def components_render(
    requests: list[ComponentRequest], *, deadline: float
) -> list[RenderedComponent | RuntimeFailure | Http404 | ValidationError]:
    """Render several instances at once (a page's blocks), each result in the order asked:
    the rendered component, or why it could not be (the exception, not raised).

    An instance whose version, configuration, props and stored state were rendered before
    is answered from the cache without calling the runtime (its render is a function of
    them). The others are sent to the runtime host concurrently; one that has not answered
    ``deadline`` seconds after they were sent is a ``timeout`` failure (logged so) and is
    left to finish on its own.
    """
    results: list = [None] * len(requests)
    stored = _stored_states(requests)
    pending = []
    calls_for: dict[str, tuple] = {}  # per installation: its version and environment, once
    for index, request in enumerate(requests):
        try:
            version = _renderable_version(request.installation, request.component_id)
            _check_input(instance=request.instance, props=request.props, action=None)
        except (Http404, ValidationError, RuntimeFailure) as error:
            results[index] = error
            continue
        row = stored.get((request.installation.pk, request.component_id, request.instance))
        props = request.props if request.props is not None else (row.props if row else {})
        key = _cache_key(version, request, props, row.state) if row else None
        element = cache.get(key) if key else None
        if element is not None:
            results[index] = RenderedComponent(request.instance, element, row.state, props)
            continue
        event = ui_render_event(
            request.installation,
            component_id=request.component_id,
            props=props,
            state=row.state if row else None,
            action=None,
            context=_ui_context(request.installation, request.instance),
        )
        owner = request.installation.pk
        if owner not in calls_for:
            full = _loaded_for_call(request.installation)
            loaded = runnable_version(full.integration, full)
            calls_for[owner] = (loaded, environment_for(loaded, full))
        loaded, environment = calls_for[owner]
        call = RuntimeCall(
            event,
            version=loaded,
            installation=request.installation,
            environment=environment,
            repeatable=True,
        )
        pending.append((index, request, version, row, props, call))
    futures = {_render_pool.submit(entry[-1].send): entry for entry in pending}
    done, _ = wait(futures, timeout=deadline)
    for future, (index, request, version, row, props, call) in futures.items():
        if future not in done:
            results[index] = call.abandon(
                IntegrationFault("timeout", f"the block did not answer within {deadline:g} s")
            )
            continue
        try:
            element, state = call.finish(_rendered(request.component_id))
            if row is None or (row.props, row.state) != (props, state):
                _store(
                    request.installation,
                    request.component_id,
                    request.instance,
                    row,
                    props=props,
                    state=state,
                )
        except (Http404, RuntimeFailure) as error:
            results[index] = error
            continue
        cache.set(_cache_key(version, request, props, state), element, BLOCK_CACHE_SECONDS)
        results[index] = RenderedComponent(request.instance, element, state, props)
    return results


#: How long a block's markup is kept for the same version, configuration, props and state.
BLOCK_CACHE_SECONDS = 3600


def _loaded_for_call(installation: Installation) -> Installation:
    """The installation as stored now, with everything a call's environment reads (its
    tokens, secrets and organization installation), in one compiled query: a page's reads
    leave them out, and an action must see the status as it is."""
    if _has_what_a_call_reads(installation):
        return installation
    loaded = installation_for_call(installation.pk)
    if loaded is None:
        raise Http404("no such installation")
    return loaded


def _has_what_a_call_reads(installation: Installation) -> bool:
    """Whether ``installation`` was read with the versions its integration may run, its
    organization installation and its tokens (``endpoint_selectors``, in this request)."""
    if not (
        Installation.integration.is_cached(installation)
        and Integration.released_version.is_cached(installation.integration)
        and Integration.development_version.is_cached(installation.integration)
        and Integration.shared_version.is_cached(installation.integration)
        and (installation.parent_id is None or Installation.parent.is_cached(installation))
    ):
        return False
    version = running_version(installation.integration, installation)
    read = [(installation, {"api_token", "credentials"})]
    read += [(installation.parent, {"api_token", "credentials"})] if installation.parent else []
    read += [(version, {"manifest", "secrets"})] if version else []
    return not any(fields & row.get_deferred_fields() for row, fields in read)


def _renderable_version(installation: Installation, component_id: str):
    """The version that renders ``component_id`` for the installation, or why none does."""
    integration = installation.integration
    if component_id not in manifest_component_ids(integration):
        raise Http404(f"the integration has no component {component_id!r}")
    version = runnable_version(integration, installation)
    if version is None:
        raise Http404("the integration has no code to run")
    if is_paused(installation):
        raise ClientFault("installation_paused", "the installation is paused")
    return version


_stored_queries: dict[tuple, Prepared] = {}


def _stored_states(requests: list[ComponentRequest]) -> dict:
    """The stored instances asked for, in one query compiled once per database and count."""
    if not requests:
        return {}
    count = len(requests)
    key = (ComponentState.objects.db, count)
    if key not in _stored_queries:
        _stored_queries[key] = Prepared(
            ComponentState.objects.filter(
                installation_id__in=stand_ins("installation", count),
                instance__in=stand_ins("instance", count),
            ).order_by()
        )
    rows = _stored_queries[key].instances(
        stand_in_values("installation", [r.installation.pk for r in requests])
        | stand_in_values("instance", [r.instance for r in requests])
    )
    return {(row.installation_id, row.component_id, row.instance): row for row in rows}


def _cache_key(version, request: ComponentRequest, props: dict, state: dict) -> str:
    """What a render depends on: the code, the installation's configuration (and its
    organization installation's), the component, its props and state."""
    installation = request.installation
    parent = installation.parent if installation.parent_id else None
    inputs = [
        version.pk,
        version.content_hash,
        installation.pk,
        installation.configuration,
        parent.configuration if parent else None,
        request.component_id,
        props,
        state,
    ]
    digest = hashlib.sha256(json.dumps(inputs, sort_keys=True, default=str).encode())
    return f"component-render:{digest.hexdigest()}"


def component_state_delete(*, installation: Installation, component_id: str, instance: str):
    """Forget one component instance (a removed block): its next render starts afresh."""
    ComponentState.objects.filter(
        installation=installation, component_id=component_id, instance=instance
    ).delete()


def _check_input(*, instance, props, action) -> None:
    if not isinstance(instance, str) or not INSTANCE_RE.fullmatch(instance):
        raise ValidationError({"instance": ["must be 1 to 64 letters, digits, '-' or '_'"]})
    if props is not None and not isinstance(props, dict):
        raise ValidationError({"props": ["must be an object"]})
    if props is not None and _json_size(props) > MAX_JSON_BYTES:
        raise ValidationError({"props": [f"must be at most {MAX_JSON_BYTES} bytes of JSON"]})
    if action is not None and not is_action(action):
        raise ValidationError({"action": ['must be an object like {"action": "<name>", ...}']})


def _json_size(value) -> int:
    return len(json.dumps(value).encode())


def _ui_context(installation: Installation, instance: str) -> dict:
    """What the component's ``element.context`` tells it about where it is shown."""
    context = {"installationId": installation.pk, "instance": instance}
    if installation.space_id:
        context["spaceId"] = installation.space_id
    if installation.site_id:
        context["siteId"] = installation.site_id
    return context


def _rendered(component_id: str):
    """Reads a render's answer: its element and state (a failure here is the call's error in
    the integration's log)."""

    def read(answer) -> tuple[dict, dict]:
        body = _answer_body(answer)
        if answer.status == 404 and body.get("error") == "unknown_component":
            raise Http404(f"the integration's code has no component {component_id!r}")
        return _checked_answer(body)

    return read


def _answer_body(answer) -> dict:
    try:
        body = answer.json()
    except ValueError:
        body = None
    if not isinstance(body, dict):
        raise IntegrationFault("invalid_answer", "the component's answer is not a JSON object")
    return body


def _checked_answer(body: dict) -> tuple[dict, dict]:
    """The answer's element and state, once both are what the platform can use."""
    state = body.get("state")
    if not isinstance(state, dict):
        raise IntegrationFault("invalid_answer", "the component's state must be an object")
    if _json_size(state) > MAX_JSON_BYTES:
        raise IntegrationFault(
            "invalid_answer", f"the component's state is over {MAX_JSON_BYTES} bytes of JSON"
        )
    problem = markup_problem(body.get("element"))
    if problem:
        raise IntegrationFault(
            "invalid_answer", f"the component's element is not markup: {problem}"
        )
    return body["element"], state


def _store(installation, component_id, instance, stored, *, props, state) -> None:
    """Write the instance's props and state, unless another render wrote them meanwhile."""
    if stored is None:
        try:
            with transaction.atomic():
                ComponentState.objects.create(
                    installation=installation,
                    component_id=component_id,
                    instance=instance,
                    props=props,
                    state=state,
                )
        except IntegrityError:
            raise _conflict() from None
        return
    written = ComponentState.objects.filter(pk=stored.pk, revision=stored.revision).update(
        props=props, state=state, revision=F("revision") + 1, updated_at=timezone.now()
    )
    if not written:
        raise _conflict()


def _conflict() -> ClientFault:
    return ClientFault(
        "conflict", "the component instance changed meanwhile; render it again and retry"
    )
