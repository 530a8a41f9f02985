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


class StaleAnswer(WorkerCrashed):
    """The first frame read for a call belongs to an earlier call: the worker wrote out of
    turn (an answer after its call's answer), and nothing of this call was acted on yet, so
    the call may run on another worker."""


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
    """What a worker printed during one call: its first and its last ``limit / 2`` bytes, and
    how many were cut between them (the end of a long output is often what explains it)."""

    def __init__(self, limit: int = OUTPUT_LIMIT):
        self.half = limit // 2
        self.head = bytearray()
        self.tail = bytearray()
        self.cut = 0

    def add(self, data: bytes):
        room = max(0, self.half - len(self.head))
        self.head += data[:room]
        self.tail += data[room:]
        overflow = len(self.tail) - self.half
        if overflow > 0:
            del self.tail[:overflow]
            self.cut += overflow

    def text(self) -> str:
        """The output as text (invalid UTF-8 replaced), with a mark where it was cut."""
        if not self.cut:
            return bytes(self.head + self.tail).decode("utf-8", "replace")
        head = codecs.getincrementaldecoder("utf-8")("replace").decode(bytes(self.head))
        tail = bytes(self.tail)
        start = 0
        while start < min(3, len(tail)) and tail[start] & 0xC0 == 0x80:
            start += 1  # a character cut in two: its continuation bytes are dropped too
        mark = f"\n[output cut: {self.cut + start} bytes in the middle]\n"
        return head + mark + tail[start:].decode("utf-8", "replace")


class PoolBusy(Exception):
    """No worker of the version became free in time."""
