"""The log line of one call of integration code, as the gateway sees the call end.

The runtime host returns what the code printed and its error (with the traceback naming the
author's files) in two headers of every answer, base64 of UTF-8 text (see
``integrations/runtime/README.md``); this module reads them and stores the line
(``log_store``).
"""

import base64
import binascii
import functools
import threading
from collections.abc import Callable
from contextlib import contextmanager
from urllib.parse import urlsplit

from django.utils import timezone

from ..models import Installation, IntegrationLog, IntegrationVersion
from ..runtime.protocol import ERROR_HEADER, OUTPUT_HEADER
from . import log_batches
from .failures import HOST_OUTCOMES, RuntimeFailure
from .later_work import hands_off, later_work, run_all
from .log_store import CallRecord, integration_log_record

#: The outcome of a failed call in the log, by the failure's code (else ``error``).
FAILURE_OUTCOMES = {"timeout": IntegrationLog.Outcome.TIMEOUT}


def _header_text(headers, name: str) -> str:
    value = headers.get(name)
    if not value:
        return ""
    try:
        return base64.b64decode(value, validate=True).decode("utf-8", "replace")
    except (binascii.Error, ValueError):
        return ""


def _public_endpoints(environment: dict) -> list[str]:
    parts = [environment.get(key) or {} for key in ("installation", "spaceInstallation")]
    parts += [environment.get("siteInstallation") or {}, environment["integration"]]
    return [part["urls"]["publicEndpoint"] for part in parts if part.get("urls")]


def request_line(event: dict, environment: dict) -> str:
    """``GET /path`` below the public endpoint the request reached; the query is left out
    (an OAuth callback's carries its code and state). A component render says which one."""
    if event["type"] == "ui_render":
        action = (event.get("action") or {}).get("action")
        component = event.get("componentId", "")
        return f"action {action} on {component}" if action else f"render {component}"
    if event["type"] != "fetch":
        return ""
    request = event["request"]
    path = urlsplit(request["url"]).path or "/"
    prefixes = [urlsplit(endpoint).path.rstrip("/") for endpoint in _public_endpoints(environment)]
    for prefix in sorted(prefixes, key=len, reverse=True):
        if prefix and (path == prefix or path.startswith(prefix + "/")):
            path = path[len(prefix) :] or "/"
            break
    return f"{request['method']} {path}"


def kind_of(event: dict) -> str:
    if event["type"] == "fetch":
        return IntegrationLog.Kind.FETCH
    if event["type"] == "ui_render":
        return IntegrationLog.Kind.UI_RENDER
    return IntegrationLog.Kind.EVENT


class CallLog:
    """Collects what is known of one call and writes its line once, when it ends."""

    def __init__(
        self,
        event: dict,
        version: IntegrationVersion,
        installation: Installation | None,
        kind: str | None,
        environment: dict,
    ):
        self.version, self.installation = version, installation
        self.kind = kind or kind_of(event)
        self.event = event["type"] if self.kind == IntegrationLog.Kind.EVENT else ""
        self.test = self.kind == IntegrationLog.Kind.EVENT and event.get("test") is True
        self.request = request_line(event, environment)
        self.started_at = timezone.now()
        self.status: int | None = None
        self.duration_ms: int | None = None
        self.output = self.error = ""
        self._written = False

    def answered(self, answer, duration_ms: int):
        """The host answered: its status, and the code's output and error it returned."""
        self.status, self.duration_ms = answer.status_code, duration_ms
        self.output = _header_text(answer.headers, OUTPUT_HEADER)
        self.error = _header_text(answer.headers, ERROR_HEADER)

    def succeeded(self):
        self._write(IntegrationLog.Outcome.OK)

    def failed(self, failure: Exception, *, duration_ms: int | None = None, outcome=None):
        """The call gave no usable answer: the code's own error (the traceback the host
        returned) when there is one, else why the platform could not use the answer."""
        if duration_ms is not None:
            self.duration_ms = duration_ms
        if isinstance(failure, RuntimeFailure):
            reason = failure.explained
            self.status = failure.status if self.status in (None, 200) else self.status
            outcome = outcome or FAILURE_OUTCOMES.get(failure.code, IntegrationLog.Outcome.ERROR)
        else:
            reason = str(failure) or type(failure).__name__
            outcome = outcome or IntegrationLog.Outcome.ERROR
        if not self.error:
            self.error = reason
        elif getattr(failure, "code", None) not in HOST_OUTCOMES:
            # The code ran (and maybe printed a traceback) but its answer is unusable.
            self.error = f"{self.error.rstrip()}\n({reason})"
        self._write(outcome)

    def _write(self, outcome: str):
        if self._written:
            return
        self._written = True
        record = CallRecord(
            version=self.version,
            installation=self.installation,
            kind=self.kind,
            event=self.event,
            test=self.test,
            request=self.request,
            started_at=self.started_at,
            outcome=outcome,
            status=self.status,
            duration_ms=self.duration_ms,
            output=self.output,
            error=self.error,
        )
        held = getattr(_held, "now", None)
        if held is not None:
            held.lines.append(record)
        else:
            integration_log_record(record)


_held = threading.local()


class Held:
    """What a request's calls leave for once its answer is sent: their log lines, and work
    that only keeps something for later requests (``later``)."""

    def __init__(self):
        self.lines: list[CallRecord] = []
        self.work: list[Callable[[], object]] = []

    def run_work(self):
        run_all(self.work)


@contextmanager
def answer_held():
    """The log lines of the calls made inside, and the work they leave for later, held
    (``Held``) instead of done: a request's view does them once its response is sent
    (``after_answer``), so the caller waits for neither the line's INSERT nor, say, a
    markup's trip to the cache."""
    held = Held()
    _held.now = held
    try:
        yield held
    except BaseException:
        _write_lines(held.lines)  # the view answers no response of its own: done now
        held.run_work()
        raise
    finally:
        _held.now = None


def later(task: Callable[[], object]) -> None:
    """Run ``task`` once the request's answer is sent (inside ``answer_held``), else now:
    for what only keeps something for later requests, never what the answer depends on."""
    held = getattr(_held, "now", None)
    if held is None:
        task()
    else:
        held.work.append(task)


def after_answer(response, held: Held):
    """Write ``held``'s lines, then run its work, when ``response`` has been sent: among its
    closers, which Django runs when the server closes it, before ``request_finished`` (and
    its closing of the database connection); the lines handed to the process's writer of
    batches when it batches (``log_batches``), the work to its thread of later work when it
    has one (``later_work``)."""
    if held.lines:
        write = log_batches.writer.add if log_batches.batching() else _write_lines
        response._resource_closers.append(functools.partial(write, held.lines))
    if held.work:
        run = functools.partial(later_work.add, held.work) if hands_off() else held.run_work
        response._resource_closers.append(run)
    return response


def _write_lines(lines: list[CallRecord]):
    for record in lines:
        integration_log_record(record)
