"""UI components: rendered by the integration's code in the runtime, their state kept here.

Each component instance (an installation's configuration screen, or one block inserted from
the quick insert menu) has its own props and state. One path renders them, one instance or a
page's many (``components_render``; ``component_render`` is a batch of one): each sends one
``ui_render`` event unless the cache answers: no action renders; an action goes to the
component's ``action`` handler, whose result with ``state`` replaces the state before the
component renders again; ``{}`` (not handled) leaves it as it was. A failing component
changes nothing.
"""

import hashlib
import json
import re
from concurrent.futures import ThreadPoolExecutor, wait
from dataclasses import dataclass, replace
from functools import partial

from django.core.cache import cache
from django.core.exceptions import ValidationError
from django.db import IntegrityError, connections, transaction
from django.http import Http404
from django.utils import timezone

from docplatform.queries import Prepared, PreparedSQL, stand_in, stand_in_values, stand_ins

from ..endpoint_selectors import UNREAD, installation_for_call, stored_instance_of
from ..environment import environment_for
from ..gateway.call_log import later
from ..gateway.client import RuntimeCall
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
    """Render one component instance, dispatching ``action`` first when given; store its state:
    ``components_render`` of one request (the same path, the same cache), its failure raised.

    ``props`` replace the instance's stored props (none stored: ``{}``); the stored state is
    sent along, or none for a new instance, whose state the component's ``initial_state``
    makes. Raises Http404 for a component the manifest does not name, ValidationError for bad
    input, a RuntimeFailure (the gateway's taxonomy) when the component cannot be rendered:
    ``installation_paused``, ``conflict`` (another action changed the instance meanwhile),
    ``invalid_answer``, ``runtime_unavailable`` and the runtime host's failures. Nothing is
    stored then.
    """
    request = ComponentRequest(installation, component_id, instance, props, action)
    [result] = components_render([request])
    if isinstance(result, Exception):
        raise result
    return result


@dataclass(frozen=True)
class ComponentRequest:
    """One component instance to render (a block of a page, a configuration screen), after
    its ``action`` when one is given."""

    installation: Installation
    component_id: str
    instance: str
    props: dict | None = None
    action: dict | None = None


#: Renders of several blocks run here at once; each thread only waits on the runtime host.
_render_pool = ThreadPoolExecutor(max_workers=16, thread_name_prefix="component-render")


def components_render(
    requests: list[ComponentRequest], *, deadline: float | None = None
) -> list[RenderedComponent | RuntimeFailure | Http404 | ValidationError]:
    """Render instances (a page's blocks; one, ``component_render``), each result in the order
    asked: the rendered component, or why it could not be (the exception, not raised).

    Caching, the same for one instance as for many: a render without an action is a function
    of the version's code, the installation's configuration (and its organization
    installation's), the component, its props and its stored state (``_cache_key``), so an
    instance rendered before with all of them unchanged is answered from the cache without
    calling the runtime (whatever changes one of them, an action's new state included, is
    another key: nothing is served stale). A render with an action always calls the runtime
    (the action's handler is the point, and it may change the state) on the installation as
    stored now (a paused one refuses it), is never sent twice, and keeps what it rendered
    for the renders without an action that follow. The others are sent to the runtime host
    concurrently; with a ``deadline``, one that has not answered that many seconds after they
    were sent is a ``timeout`` failure (logged so) and is left to finish on its own.
    """
    results: list = [None] * len(requests)
    for index, request in enumerate(requests):  # the input checked before anything is read
        try:
            _check_input(instance=request.instance, props=request.props, action=request.action)
        except ValidationError as error:
            results[index] = error
    stored = _stored_states(
        [r for r, result in zip(requests, results, strict=True) if result is None]
    )
    pending = []
    calls_for: dict[str, tuple] = {}  # per installation: its version and environment, once
    for index, request in enumerate(requests):
        if results[index] is not None:
            continue
        try:
            if request.action is not None:
                request = replace(request, installation=_loaded_for_call(request.installation))
            version = _renderable_version(request.installation, request.component_id)
        except (Http404, ValidationError, RuntimeFailure) as error:
            results[index] = error
            continue
        row = stored.get((request.installation.pk, request.component_id, request.instance))
        props = request.props if request.props is not None else (row.props if row else {})
        if request.action is None and row is not None:
            element = cache.get(_cache_key(version, request, props, row.state))
            if element is not None:
                results[index] = RenderedComponent(request.instance, element, row.state, props)
                continue
        event = ui_render_event(
            request.installation,
            component_id=request.component_id,
            props=props,
            state=row.state if row else None,
            action=request.action,
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
            repeatable=request.action is None,
        )
        pending.append((index, request, version, row, props, call))
    for index, failure in _sent(pending, deadline):
        results[index] = failure
    for index, request, version, row, props, call in pending:
        if results[index] is None:
            results[index] = _finished(request, version, row, props, call)
    return results


def _sent(pending: list, deadline: float | None) -> list[tuple[int, RuntimeFailure]]:
    """Send the calls (one on this thread; several at once on the pool); the failures of those
    that did not answer within ``deadline``, by index."""
    if len(pending) == 1 and deadline is None:
        pending[0][-1].send()
        return []
    futures = {_render_pool.submit(entry[-1].send): entry for entry in pending}
    done, _ = wait(futures, timeout=deadline)
    message = f"the block did not answer within {deadline or 0:g} s"
    return [
        (entry[0], entry[-1].abandon(IntegrationFault("timeout", message)))
        for future, entry in futures.items()
        if future not in done
    ]


def _finished(request: ComponentRequest, version, row, props: dict, call: RuntimeCall):
    """The answered call's render, stored and kept; or why it failed."""
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
        return error
    # Kept for the next render once this one is answered (an action's answer need not wait).
    key = _cache_key(version, request, props, state)
    later(partial(cache.set, key, element, BLOCK_CACHE_SECONDS))
    return RenderedComponent(request.instance, element, state, props)


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
    """The stored instances asked for: as read with their installation (``stored_instance_of``),
    or in one query compiled once per database and count."""
    stored = {}
    unread = []
    for request in requests:
        read = stored_instance_of(request.installation, request.component_id, request.instance)
        if read is UNREAD:
            unread.append(request)
        elif read is not None:
            stored[request.installation.pk, request.component_id, request.instance] = read
    return stored | _stored_rows(unread)


def _stored_rows(requests: list[ComponentRequest]) -> dict:
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


def is_instance_name(value) -> bool:
    """Whether ``value`` may name a component instance."""
    return isinstance(value, str) and INSTANCE_RE.fullmatch(value) is not None


def _check_input(*, instance, props, action) -> None:
    if not is_instance_name(instance):
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
    connection = connections[ComponentState.objects.db]
    written = _state_update().execute(
        {
            stand_in("props"): _PROPS.get_db_prep_save(props, connection),
            stand_in("state"): _STATE.get_db_prep_save(state, connection),
            stand_in("now"): timezone.now(),
            stand_in("pk"): stored.pk,
            stand_in("revision"): stored.revision,
        }
    )
    if not written:
        raise _conflict()


_PROPS, _STATE = ComponentState._meta.get_field("props"), ComponentState._meta.get_field("state")
_state_updates: dict[str, PreparedSQL] = {}


def _state_update() -> PreparedSQL:
    """A stored instance's write (its props and state, its revision one up) when its revision
    is still the one read; the id of the row written, or none. Compiled once per database:
    the ORM's ``update`` compiled it at every action."""
    db = ComponentState.objects.db
    if db not in _state_updates:
        quote = connections[db].ops.quote_name
        table = quote(ComponentState._meta.db_table)
        props, state, revision, updated_at, pk = (
            quote(ComponentState._meta.get_field(name).column)
            for name in ("props", "state", "revision", "updated_at", "id")
        )
        sql = (
            f"UPDATE {table} SET {props} = %s, {state} = %s, {revision} = {revision} + 1, "  # noqa: S608
            f"{updated_at} = %s WHERE {pk} = %s AND {revision} = %s RETURNING {pk}"
        )
        names = ("props", "state", "now", "pk", "revision")
        _state_updates[db] = PreparedSQL(sql, [stand_in(name) for name in names], using=db)
    return _state_updates[db]


def _conflict() -> ClientFault:
    return ClientFault(
        "conflict", "the component instance changed meanwhile; render it again and retry"
    )
