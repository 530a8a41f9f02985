"""Why a call of integration code did not give the platform a usable answer: one taxonomy,
one mapping to HTTP status, one error body (after Sentry's ``sentry_apps/utils/errors.py``).

Three parties can be at fault, and callers act on which:

- ``PlatformFault``: the platform's side failed (the runtime host cannot be reached, it
  refused the envelope, or the integration's worker was killed from outside: the kernel's
  OOM killer, a shutdown). Worth retrying; an operator should look.
- ``IntegrationFault``: the integration's code failed (an exception, a crash, its time limit,
  an answer the platform cannot use), or its runtime is busy. Not the caller's doing.
- ``ClientFault``: the request cannot be served as asked (the installation is paused, the
  integration has no code, a body too large, a state that changed meanwhile).
"""

from typing import ClassVar

from docplatform_sdk.errors import exposed

from ..runtime import protocol

#: The HTTP status of every failure code, whichever party it belongs to.
STATUS: dict[str, int] = {
    # the platform's
    "runtime_unavailable": 502,
    "code_checks_unavailable": 503,  # publish cannot load the code to check it
    protocol.WORKER_LOST: 503,  # the host's worker was killed from outside during the call
    # the integration's
    protocol.INTEGRATION_ERROR: 502,
    protocol.WORKER_CRASHED: 502,
    protocol.RUNTIME_ERROR: 502,
    "invalid_answer": 502,
    protocol.ANSWER_TOO_LARGE: 502,  # over RUNTIME_MAX_ANSWER_MB: not read past it
    protocol.TIMEOUT: 504,
    protocol.BUSY: 503,
    "exposable": 422,  # the code raised ExposableError: its message is for people
    # the client's
    "installation_paused": 503,
    "no_script": 404,
    "not_found": 404,
    "body_too_large": 413,
    "invalid_location": 400,  # a sign-in's location is not an address of its site
    "conflict": 409,
}

#: What the runtime host's outcomes mean, in the words people see.
HOST_OUTCOMES: dict[str, str] = {
    protocol.TIMEOUT: "the integration did not answer in time",
    protocol.WORKER_CRASHED: "the integration's worker crashed",
    protocol.INTEGRATION_ERROR: "the integration raised an error",
    protocol.BUSY: "the runtime is busy",
    protocol.RUNTIME_ERROR: "the runtime failed",
    protocol.WORKER_LOST: "the integration's worker was stopped from outside",
    protocol.ANSWER_TOO_LARGE: "the integration's answer is too large",
}
#: Host outcomes that are no doing of the integration's code: worth a retry.
PLATFORM_OUTCOMES = {protocol.WORKER_LOST}
MEBIBYTE = 1024 * 1024


class RuntimeFailure(Exception):
    """A call that gave no usable answer; ``code`` names why (a key of ``STATUS``)."""

    party: ClassVar[str]

    def __init__(self, code: str, message: str, detail: str | None = None):
        super().__init__(message)
        self.code, self.message, self.detail = code, message, detail
        self.duration_ms: int | None = None  # how long the call ran, when it ran at all

    @property
    def status(self) -> int:
        return STATUS.get(self.code, 502)

    @property
    def explained(self) -> str:
        """The message with the integration's own words when it gave any (for logs)."""
        return f"{self.message}: {self.detail}" if self.detail else self.message

    def as_json(self) -> dict:
        """The body a public endpoint answers with."""
        return {"error": self.code, "message": self.message}

    def as_api_error(self) -> dict:
        """The body the REST API answers with (its one error shape)."""
        kind = "server_error" if self.status >= 500 else "client_error"
        return {"type": kind, "errors": [{"code": self.code, "detail": self.message, "attr": None}]}


class PlatformFault(RuntimeFailure):
    party = "platform"


class CodeChecksUnavailable(PlatformFault):
    """The runtime host could not load the code to check it: ``reason`` says why, in words
    that fit ``check`` (nothing to publish) as well as publish (whose message adds that nothing
    was published)."""

    def __init__(self, reason: str):
        super().__init__(
            "code_checks_unavailable",
            f"the code cannot be checked: {reason}; nothing was published, try again later",
        )
        self.reason = reason


class IntegrationFault(RuntimeFailure):
    party = "integration"

    @classmethod
    def from_outcome(
        cls, outcome: str, detail: str | None = None, body: dict | None = None
    ) -> RuntimeFailure:
        """The failure the runtime host reported as ``outcome`` (``timeout``, ...); a
        PlatformFault for ``PLATFORM_OUTCOMES``. When the code raised ExposableError
        (``body``: ``{"error": "exposable", "message"}``), its message, one line of plain
        text, is the message people see; any other error's ``detail`` stays in the
        integration's log."""
        body = body if isinstance(body, dict) else {}
        words = exposed(body["message"]) if isinstance(body.get("message"), str) else ""
        if outcome == protocol.INTEGRATION_ERROR and body.get("error") == "exposable" and words:
            return cls("exposable", words, detail)
        if outcome in PLATFORM_OUTCOMES:
            return PlatformFault(outcome, HOST_OUTCOMES[outcome], detail)
        limit = body.get("limit")
        if outcome == protocol.ANSWER_TOO_LARGE and isinstance(limit, int) and limit > 0:
            return cls(outcome, f"the integration's answer is over {limit / MEBIBYTE:g} MB", detail)
        return cls(outcome, HOST_OUTCOMES[outcome], detail)


class ClientFault(RuntimeFailure):
    party = "client"
