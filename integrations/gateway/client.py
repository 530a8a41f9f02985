"""The gateway's client: envelopes to the runtime host, answers or failures back.

``POST {host}/integrations/{name}/v1`` with the parts ``event``, ``environment`` and
``fetch-body`` (multipart/form-data), the raw body signed with the platform-to-runtime key
(the webhook scheme). The host keeps code by the SHA-256 of its bundle (which it checks);
when it does not have this version's bundle it answers 409 ``bundle_required`` and the
envelope is sent again with the extension part ``bundle``.

``{host}`` is one of ``RUNTIME_URL``'s, chosen by the bundle's hash (``hosts.py``). A call
goes to the next host only when the connection failed (refused, or not made in time):
nothing reached the host. A call that may have reached one (no answer in time, a connection
broken mid-answer) is never sent again, save a ``repeatable`` one. An answer is read up to
``RUNTIME_MAX_ANSWER_MB``, never past it.
"""

import json
import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from django.conf import settings
from docplatform_sdk import codebundle, signing
from urllib3 import BaseHTTPResponse, HTTPHeaderDict, Timeout
from urllib3.exceptions import ConnectTimeoutError, HTTPError, NewConnectionError, ReadTimeoutError
from urllib3.filepost import encode_multipart_formdata

from docplatform.observability.metrics import runtime_call_observed
from docplatform.observability.tracing import context_now, span, trace_headers_now

from ..environment import environment_for, runtime_signing_key
from ..models import Installation, IntegrationLog, IntegrationVersion
from ..runtime import frames, protocol
from . import hosts
from .call_log import CallLog
from .failures import (
    HOST_OUTCOMES,
    CodeChecksUnavailable,
    IntegrationFault,
    PlatformFault,
    RuntimeFailure,
)

MEBIBYTE = 1024 * 1024
#: Bytes read from the host at a time.
CHUNK = 64 * 1024


@dataclass(frozen=True)
class RuntimeAnswer:
    """What the integration's code answered (the runtime host's own failures are raised)."""

    status: int
    headers: dict
    body: bytes
    duration_ms: int

    def json(self):
        return json.loads(self.body)


@dataclass(frozen=True)
class HostAnswer:
    """The runtime host's answer, its body read whole (within ``RUNTIME_MAX_ANSWER_MB``)."""

    host: str
    status_code: int
    headers: HTTPHeaderDict
    content: bytes

    def json(self):
        return json.loads(self.content)


@dataclass(frozen=True)
class Outgoing:
    """What a call sends, encoded for the transport of the host that takes it: an envelope's
    parts by name (``protocol.PARTS``), or a raw body (``/inspect``'s bundle)."""

    parts: dict[str, bytes] | None = None
    body: bytes | None = None

    def http(self) -> tuple[bytes, str]:
        """The HTTP body and its Content-Type: multipart/form-data for an envelope."""
        if self.parts is None:
            return self.body or b"", "application/json"
        files = {
            protocol.EVENT_PART: ("event.json", "application/json"),
            protocol.ENVIRONMENT_PART: ("environment.json", "application/json"),
            protocol.FETCH_BODY_PART: ("body", "application/octet-stream"),
            protocol.BUNDLE_PART: ("bundle.json", "application/json"),
        }
        return encode_multipart_formdata(
            [(name, (files[name][0], data, files[name][1])) for name, data in self.parts.items()]
        )

    def fields(self, path: str, trace: dict) -> list[bytes | None]:
        """The request frame's fields (``frames.REQUEST_FIELDS``)."""
        fields: list[bytes | None] = [None] * frames.REQUEST_FIELDS
        fields[frames.PATH] = path.encode()
        for name, position in (
            ("traceparent", frames.TRACEPARENT),
            ("tracestate", frames.TRACESTATE),
        ):
            if trace.get(name):
                fields[position] = trace[name].encode()
        for name, position in FRAME_PARTS:
            fields[position] = (self.parts or {}).get(name)
        fields[frames.BODY] = self.body
        return fields


FRAME_PARTS = (
    (protocol.EVENT_PART, frames.EVENT),
    (protocol.ENVIRONMENT_PART, frames.ENVIRONMENT),
    (protocol.FETCH_BODY_PART, frames.FETCH_BODY),
    (protocol.BUNDLE_PART, frames.BUNDLE),
)


def _envelope(event: dict, environment: dict, fetch_body: bytes | None, bundle: bytes | None):
    parts = {
        protocol.EVENT_PART: json.dumps(event).encode(),
        protocol.ENVIRONMENT_PART: json.dumps(environment).encode(),
    }
    if fetch_body is not None:
        parts[protocol.FETCH_BODY_PART] = fetch_body
    if bundle is not None:
        parts[protocol.BUNDLE_PART] = bundle
    return Outgoing(parts=parts)


def call_runtime(
    event: dict,
    *,
    version: IntegrationVersion,
    installation: Installation | None = None,
    fetch_body: bytes | None = None,
    kind: str | None = None,
    read: Callable[[RuntimeAnswer], Any] | None = None,
):
    """Send one envelope and return the integration code's answer, or what ``read`` makes of
    it. Raises PlatformFault when the host cannot be reached or refuses the envelope,
    IntegrationFault when the code failed (``duration_ms`` of the call is on the failure as
    ``duration_ms``), and what ``read`` raises: a RuntimeFailure from ``read`` (an answer
    the caller cannot use) is the call's error in its log.

    Every call is logged (``call_log``, ``log_store``), whatever its end: ``kind`` is ``event``,
    ``fetch`` or ``ui_render`` by the event's type unless given (``completion``, ``oauth``).
    """
    call = RuntimeCall(
        event, version=version, installation=installation, fetch_body=fetch_body, kind=kind
    )
    call.send()
    return call.finish(read)


class RuntimeCall:
    """One call in three steps, so that several can be sent at once (a page's blocks):
    made (reads the database: the environment), ``send`` (the HTTP round trip alone, no
    database: safe in another thread), ``finish`` (on the caller's thread: the log line, the
    answer read or the failure raised)."""

    def __init__(
        self,
        event,
        *,
        version,
        installation=None,
        fetch_body=None,
        kind=None,
        environment=None,
        repeatable=False,
    ):
        """``environment``: the call's environment when the caller has built it already
        (several calls for one installation), else it is built here. ``repeatable``: the
        call changes nothing (a render without an action), so a connection that broke
        before an answer is tried once more; any other call is never sent twice."""
        self.event, self.version, self.fetch_body = event, version, fetch_body
        self.repeatable = repeatable
        self.path = protocol.envelope_path(version.integration.name)
        self.environment = environment or environment_for(version, installation)
        self.key = self.environment["integration"].get(protocol.BUNDLE_HASH) or self.path
        self.log = CallLog(event, version, installation, kind, self.environment)
        self._started = time.perf_counter()
        self._trace = context_now()  # the caller's trace, which ``send``'s thread continues
        self._answer: HostAnswer | None = None
        self._failure: RuntimeFailure | None = None
        self._duration_ms = 0

    def send(self) -> None:
        """The first POST (without the bundle); never raises."""
        self._started = time.perf_counter()
        for _attempt in range(2 if self.repeatable else 1):
            try:
                self._answer, self._failure = self._post(bundle=None), None
                break
            except PlatformFault as failure:
                self._failure = failure
            except IntegrationFault as failure:  # an answer too large: it would be again
                self._failure = failure
                break
        self._duration_ms = int((time.perf_counter() - self._started) * 1000)

    def abandon(self, failure: RuntimeFailure) -> RuntimeFailure:
        """The caller stopped waiting (its deadline): log the call as ``failure``."""
        failure.duration_ms = int((time.perf_counter() - self._started) * 1000)
        runtime_call_observed(str(self.log.kind), failure.duration_ms / 1000)
        self.log.failed(failure, duration_ms=failure.duration_ms)
        return failure

    def finish(self, read: Callable[[RuntimeAnswer], Any] | None = None):
        answer = self._answer
        if self._failure is None and _wants_bundle(answer):
            # The host does not have this version's code yet: send it along, once.
            try:
                answer = self._post(bundle=bytes(self.version.bundle))
            except RuntimeFailure as failure:
                self._failure = failure
            self._duration_ms = int((time.perf_counter() - self._started) * 1000)
        log, duration_ms = self.log, self._duration_ms
        runtime_call_observed(str(log.kind), duration_ms / 1000)
        if self._failure is not None:
            log.failed(self._failure, duration_ms=duration_ms)
            raise self._failure
        log.answered(answer, duration_ms)
        outcome = answer.headers.get(protocol.OUTCOME_HEADER, "")
        if outcome in HOST_OUTCOMES:
            failure = IntegrationFault.from_outcome(outcome, _message_of(answer), _body_of(answer))
            failure.duration_ms = duration_ms
            log.failed(failure)
            raise failure
        if outcome != protocol.OK:
            # The envelope itself was refused (signature, shape, size): the platform's fault.
            refused = f"{answer.status_code} {outcome or 'no outcome'}"
            failure = PlatformFault(
                "runtime_unavailable", f"the runtime refused the envelope ({refused})"
            )
            log.failed(failure, outcome=IntegrationLog.Outcome.REFUSED)
            raise failure
        result = RuntimeAnswer(
            status=answer.status_code,
            headers=dict(answer.headers),
            body=answer.content,
            duration_ms=duration_ms,
        )
        if read is None:
            log.succeeded()
            return result
        try:
            value = read(result)
        except RuntimeFailure as failure:
            failure.duration_ms = duration_ms
            log.failed(failure)
            raise
        except Exception as error:
            log.failed(error)
            raise
        log.succeeded()
        return value

    def _post(self, bundle: bytes | None) -> HostAnswer:
        """The envelope, with ``bundle`` when given, to this version's host (reads no
        database: ``send`` runs it in other threads)."""
        outgoing = _envelope(self.event, self.environment, self.fetch_body, bundle)
        # A span of the caller's trace (tracing on), carried to the host as ``traceparent``.
        with span(
            "runtime call",
            parent=self._trace,
            kind="client",
            attributes={
                "docplatform.integration": self.version.integration.name,
                "docplatform.runtime.kind": str(self.log.kind),
            },
        ) as traced:
            answer = _post(self.path, self.key, outgoing, traced.headers())
            traced.set("http.response.status_code", answer.status_code)
            return answer


def _wants_bundle(answer: HostAnswer | None) -> bool:
    return (
        answer is not None
        and answer.status_code == 409
        and answer.headers.get(protocol.OUTCOME_HEADER) == protocol.BUNDLE_REQUIRED
    )


def _body_of(answer: HostAnswer) -> dict | None:
    """The answer's JSON object, if it is one."""
    try:
        body = answer.json()
    except ValueError:
        return None
    return body if isinstance(body, dict) else None


def _message_of(answer: HostAnswer) -> str | None:
    """The integration's exception (``Type: message``) the host reported, if any."""
    message = (_body_of(answer) or {}).get("message")
    return message if isinstance(message, str) else None


def _post(path: str, key: str, outgoing: Outgoing, trace: dict | None = None) -> HostAnswer:
    """``POST path`` with ``outgoing``, signed, to the first of ``key``'s hosts that takes the
    connection (over HTTP, or in frames: ``hosts.speaks_frames``); PlatformFault when none
    does or the call broke, IntegrationFault when the answer is over
    ``RUNTIME_MAX_ANSWER_MB``. ``trace``: the trace context headers (default: the current
    span's; none while tracing is off)."""
    trace = trace_headers_now() if trace is None else trace
    refused: Exception | None = None
    for host in hosts.marks.candidates(key, hosts.host_urls(settings.RUNTIME_URL)):
        try:
            if hosts.speaks_frames(host):
                answer = _call_in_frames(host, path, outgoing, trace)
            else:
                answer = _post_http(host, path, outgoing, trace)
        except (ConnectTimeoutError, frames.ConnectFailed) as error:  # nothing reached the host
            hosts.marks.mark_down(host)
            refused = error
            continue
        hosts.marks.answered(host)
        return answer
    raise _unreachable(refused)


def _post_http(host: str, path: str, outgoing: Outgoing, trace: dict) -> HostAnswer:
    """The call over HTTP; ConnectTimeoutError (and its NewConnectionError) when no
    connection was made."""
    body, content_type = outgoing.http()
    headers = {
        "Content-Type": content_type,
        signing.HEADER: signing.sign(body, runtime_signing_key()),
        **trace,
    }
    timeout = Timeout(
        connect=settings.RUNTIME_CONNECT_TIMEOUT, read=settings.RUNTIME_RESPONSE_TIMEOUT
    )
    try:
        response = hosts.pool(host).urlopen(
            "POST",
            path,
            body=body,
            headers=headers,
            timeout=timeout,
            retries=False,
            redirect=False,
            preload_content=False,
            decode_content=False,
        )
    except ConnectTimeoutError:
        raise
    except HTTPError as error:
        raise _unreachable(error) from error
    return _read(host, response)


def _call_in_frames(host: str, path: str, outgoing: Outgoing, trace: dict) -> HostAnswer:
    """The call in a frame on the process's connection to ``host``; frames.ConnectFailed
    when no connection could take it (nothing reached the host). A connection found ended
    when the frame was sent is replaced once: the frame had not gone whole."""
    limit = int(settings.RUNTIME_MAX_ANSWER_MB * MEBIBYTE)
    fields = outgoing.fields(path, trace)
    for fresh in (False, True):
        connection = hosts.connection(host)
        try:
            answer = connection.call(
                fields, timeout=settings.RUNTIME_RESPONSE_TIMEOUT, answer_limit=limit
            )
            break
        except frames.ConnectFailed:
            if fresh:
                raise
        except frames.AnswerTooLarge:
            answer = None
            break
        except frames.AnswerTimeout as error:
            raise _unreachable(ReadTimeoutError(None, path, str(error))) from error
        except frames.ConnectionBroken as error:
            raise _unreachable(error) from error
    if answer is None or len(answer.body) > limit:
        raise IntegrationFault(
            protocol.ANSWER_TOO_LARGE,
            f"the integration's answer is over {settings.RUNTIME_MAX_ANSWER_MB:g} MB",
        )
    return HostAnswer(host, answer.status, HTTPHeaderDict(answer.headers), answer.body)


def _read(host: str, response: BaseHTTPResponse) -> HostAnswer:
    """The answer, its body read up to ``RUNTIME_MAX_ANSWER_MB`` and not a byte past it
    (the connection is then closed)."""
    limit = int(settings.RUNTIME_MAX_ANSWER_MB * MEBIBYTE)
    declared = response.length_remaining or 0  # its Content-Length
    chunks, size = [], 0
    try:
        if declared <= limit:
            for chunk in response.stream(min(CHUNK, limit + 1)):
                chunks.append(chunk)
                size += len(chunk)
                if size > limit:
                    break
        if max(declared, size) > limit:
            response.close()
            raise IntegrationFault(
                protocol.ANSWER_TOO_LARGE,
                f"the integration's answer is over {settings.RUNTIME_MAX_ANSWER_MB:g} MB",
            )
    except HTTPError as error:
        raise _unreachable(error) from error
    finally:
        response.release_conn()
    return HostAnswer(host, response.status, response.headers, b"".join(chunks))


def _unreachable(error: Exception | None) -> PlatformFault:
    """The failure of a call that got no answer, named as it always was (the names of
    ``requests``' errors)."""
    if isinstance(error, frames.ConnectFailed) and isinstance(error.__cause__, TimeoutError):
        reason = "ConnectTimeout"
    elif isinstance(error, NewConnectionError | frames.FrameError) or error is None:
        reason = "ConnectionError"  # refused, or the host's name does not resolve
    elif isinstance(error, ConnectTimeoutError):
        reason = "ConnectTimeout"
    elif isinstance(error, ReadTimeoutError):
        reason = "ReadTimeout"
    else:
        reason = "ConnectionError"  # the connection broke before the whole answer
    return PlatformFault("runtime_unavailable", f"the runtime host cannot be reached ({reason})")


#: Descriptions of code that loaded, by (runtime host, bundle digest), the least recently
#: used dropped beyond ``DESCRIPTIONS_KEPT``: the same code always describes the same, so
#: publishing unchanged code again (a manifest edit in ``dev``) loads nothing. A failure is
#: never kept: it is asked again each time.
DESCRIPTIONS_KEPT = 256
_descriptions: OrderedDict[tuple[str, str], dict] = OrderedDict()
_descriptions_lock = threading.Lock()


def inspect_code(bundle: bytes) -> dict:
    """The runtime host's description of ``bundle``'s code, loaded once in its sandbox
    (``POST {RUNTIME_URL}/inspect``, the body signed as envelopes are): what publish checks
    against the manifest. PlatformFault when the host cannot be reached or does not answer
    one (the code is then not checked, so nothing is published)."""
    key = (settings.RUNTIME_URL, codebundle.digest(bundle))
    with _descriptions_lock:
        if key in _descriptions:
            _descriptions.move_to_end(key)
            return _descriptions[key]
    description = _inspect(bundle)
    if isinstance(description.get("integration"), dict):
        with _descriptions_lock:
            _descriptions[key] = description
            while len(_descriptions) > DESCRIPTIONS_KEPT:
                _descriptions.popitem(last=False)
    return description


def _inspect(bundle: bytes) -> dict:
    try:
        answer = _post(protocol.INSPECT_PATH, codebundle.digest(bundle), Outgoing(body=bundle))
    except RuntimeFailure as failure:
        raise CodeChecksUnavailable(failure.message) from failure
    try:
        description = answer.json()[protocol.DESCRIPTION] if answer.status_code == 200 else None
    except (ValueError, KeyError, TypeError):  # not JSON
        description = None
    if not isinstance(description, dict):
        outcome = answer.headers.get(protocol.OUTCOME_HEADER) or ""
        raise CodeChecksUnavailable(
            f"the runtime host answered {answer.status_code} {outcome}".rstrip()
        )
    return description
