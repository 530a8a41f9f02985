"""How a call to a worker can fail (the host maps each to its answer), and what the worker
printed during a call."""

import codecs

#: What a call's log keeps of what the code printed (stdout and stderr), and of its error.
OUTPUT_LIMIT = 4096
ERROR_LIMIT = 8192


class CallFailed(Exception):
    """A call that gave no answer; ``output`` is what the code printed until then, ``error``
    its traceback when it has one."""

    output: str = ""
    error: str = ""


class WorkerCrashed(CallFailed):
    """The worker died or garbled its answer."""


class WorkerTimeout(CallFailed):
    """The worker did not answer within the time limit."""


class WorkerLost(WorkerCrashed):
    """The worker was killed from outside (not by its code, nor for a limit): the call may be
    tried again."""


class AnswerTooLarge(WorkerCrashed):
    """The worker's answer is over ``limit`` bytes (left unread)."""

    def __init__(self, limit: int):
        super().__init__(f"the worker's answer is over {limit} bytes")
        self.limit = limit


class ScriptLoadError(CallFailed):
    """The code failed to load; the message is its exception, without the stack (which is
    ``error``)."""

    def __init__(self, message: str, *, error: str = "", output: str = ""):
        super().__init__(message)
        self.error, self.output = error, output

    def again(self) -> "ScriptLoadError":
        """The same failure, raised anew for another call."""
        return ScriptLoadError(str(self), error=self.error, output=self.output)


class OutputCapture:
    """What a worker printed during one call: the first ``limit`` bytes, and how many more."""

    def __init__(self, limit: int = OUTPUT_LIMIT):
        self.limit = limit
        self.kept = bytearray()
        self.cut = 0

    def add(self, data: bytes):
        room = max(0, self.limit - len(self.kept))
        self.kept += data[:room]
        self.cut += len(data) - min(room, len(data))

    def text(self) -> str:
        """The output as text (invalid UTF-8 replaced), with a mark where it was cut."""
        decoder = codecs.getincrementaldecoder("utf-8")("replace")
        text = decoder.decode(bytes(self.kept), final=not self.cut)
        if self.cut:
            text += f"\n[output cut: {self.cut} more bytes]"
        return text


class PoolBusy(Exception):
    """No worker of the version became free in time."""
