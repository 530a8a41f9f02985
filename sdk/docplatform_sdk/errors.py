"""Errors in the author's words: what integration code raises for the people who use it."""

#: The longest message shown; a longer one is cut with "…".
MESSAGE_LIMIT = 300


class ExposableError(Exception):
    """Raise it from a component's handlers, ``fetch`` or a completion to show its message to
    the person using the integration: ``raise ExposableError("Reconnect Slack: the token has
    expired")``. Any other exception shows a generic message; its traceback goes to the
    integration's log, never to people. The message is shown as plain text: one line, at most
    ``MESSAGE_LIMIT`` characters, never markup."""

    def __init__(self, message: str):
        super().__init__(str(message))
        self.message = str(message)


def exposed(message) -> str:
    """``message`` fit to show: one line of printable text, cut at ``MESSAGE_LIMIT``."""
    text = "".join(ch if ch.isprintable() else " " for ch in str(message))
    text = " ".join(text.split())
    return text if len(text) <= MESSAGE_LIMIT else text[: MESSAGE_LIMIT - 1] + "…"


def error_body(error: BaseException, described: str) -> dict:
    """The body a failed call answers: the author's words for an ExposableError (``error``
    ``exposable``), else ``integration_error`` with ``described`` (which people never see)."""
    if isinstance(error, ExposableError):
        return {"error": "exposable", "message": exposed(error.message) or "the call failed"}
    return {"error": "integration_error", "message": described}
