"""The bound on POSTs in flight to one receiver (``host:port``) in a worker process, so a burst
to one slow URL cannot take every sender: what is over the bound is postponed, not failed,
until about when a slot should be free again."""

import threading
import time
from collections import defaultdict

from django.conf import settings

#: An attempt's duration assumed for a receiver not heard from yet (seconds).
FIRST_GUESS = 1.0
#: How much the last attempt weighs in a receiver's typical duration.
WEIGHT = 0.3


class ReceiverSlots:
    """Per receiver: the POSTs in flight, a typical attempt's duration, and the times the
    deliveries postponed for it come due."""

    def __init__(self):
        self._lock = threading.Lock()
        self._in_flight: dict[str, int] = defaultdict(int)
        self._duration: dict[str, float] = {}
        self._postponed: dict[str, list[float]] = defaultdict(list)

    def take(self, receiver: str) -> bool:
        """A slot for one POST to ``receiver``, or False when its bound is reached."""
        with self._lock:
            if self._in_flight[receiver] >= settings.WEBHOOK_RECEIVER_CONCURRENCY:
                return False
            self._in_flight[receiver] += 1
            return True

    def give_back(self, receiver: str, seconds: float) -> None:
        """The POST that took a slot ended after ``seconds``."""
        with self._lock:
            self._in_flight[receiver] -= 1
            if not self._in_flight[receiver]:
                del self._in_flight[receiver]
            typical = self._duration.get(receiver, seconds)
            self._duration[receiver] = typical + WEIGHT * (seconds - typical)

    def give_back_unused(self, receiver: str) -> None:
        """A slot taken for a POST that was not made (its endpoint's limits held it back)."""
        with self._lock:
            self._in_flight[receiver] -= 1
            if not self._in_flight[receiver]:
                del self._in_flight[receiver]

    def typical(self, receiver: str) -> float:
        """A typical attempt's duration to ``receiver`` (seconds)."""
        with self._lock:
            return self._duration.get(receiver, FIRST_GUESS)

    def postpone(self, receiver: str) -> float:
        """Seconds until a delivery over the bound should come back: a typical attempt for
        each full round of slots taken by those postponed before it."""
        bound = settings.WEBHOOK_RECEIVER_CONCURRENCY
        now = time.monotonic()
        with self._lock:
            waiting = [due for due in self._postponed[receiver] if due > now]
            typical = self._duration.get(receiver, FIRST_GUESS)
            delay = typical * (len(waiting) // bound + 1)
            waiting.append(now + delay)
            self._postponed[receiver] = waiting
            return delay

    def in_flight(self, receiver: str) -> int:
        with self._lock:
            return self._in_flight.get(receiver, 0)


#: The worker process's slots, shared by its drains and single-delivery tasks.
slots = ReceiverSlots()
