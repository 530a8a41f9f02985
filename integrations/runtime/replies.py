"""The runtime host's HTTP answers: ``Reply`` (a status, a body, headers and the call's
outcome, with what the code printed and its error for the ``X-Runtime-Output`` and
``X-Runtime-Error`` headers), and a worker's answer made into one (``reply_from``)."""

import base64
import json
from dataclasses import dataclass
from http import HTTPStatus

from .call_failures import ERROR_LIMIT, CallFailed
from .protocol import ERROR_HEADER, OK, OUTPUT_HEADER, UNFORWARDED_HEADERS, WORKER_CRASHED


@dataclass
class Reply:
    status: int
    body: bytes
    headers: list[tuple[str, str]]
    outcome: str
    output: str = ""  # what the integration's code printed during the call
    error: str = ""  # its error, with the traceback naming the author's files

    @classmethod
    def json(cls, status: int, data: dict, outcome: str | None = None) -> "Reply":
        body = json.dumps(data).encode()
        return cls(status, body, [("Content-Type", "application/json")], outcome or data["error"])

    def logged(self, failure: CallFailed, error: str = "") -> "Reply":
        """This reply, with what the failed call printed and why it failed."""
        self.output, self.error = failure.output, failure.error or error
        return self

    def log_headers(self) -> list[tuple[str, str]]:
        return [
            (name, base64.b64encode(text.encode("utf-8", "replace")).decode())
            for name, text in ((OUTPUT_HEADER, self.output), (ERROR_HEADER, self.error))
            if text
        ]


def reply_from(answer: dict) -> Reply:
    """The worker's answer as this host's HTTP reply; a malformed answer is a crash."""
    try:
        status = answer["status"]
        headers = [(str(name), str(value)) for name, value in answer["headers"]]
        body = answer["body"]
        if not isinstance(body, bytes):
            raise TypeError("the body is not bytes")
        if not (isinstance(status, int) and 100 <= status <= 599):
            raise ValueError(status)
        if any(not name or "\r" in name + value or "\n" in name + value for name, value in headers):
            raise ValueError("a header with a line break")
    except (KeyError, TypeError, ValueError):
        reply = Reply.json(502, {"error": WORKER_CRASHED})
        reply.output, reply.error = answer.get("output", ""), "the worker's answer is malformed"
        return reply
    headers = [(name, value) for name, value in headers if name.lower() not in UNFORWARDED_HEADERS]
    error = answer.get("error")
    return Reply(
        status,
        body,
        headers,
        str(answer.get("outcome") or OK),
        output=answer.get("output", ""),
        error=error[:ERROR_LIMIT] if isinstance(error, str) else "",
    )


def phrase(status: int) -> str:
    """The status line's reason phrase (``Unknown`` for a status HTTP does not name)."""
    try:
        return HTTPStatus(status).phrase
    except ValueError:
        return "Unknown"
