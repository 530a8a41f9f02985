"""How the webhook delivery benchmark fires events: a burst, or a steady rate.

Standard library only, shared by the platform's side (``webhook_delivery.py``) and the peer's
driver, which runs in the peer's own virtual environment.
"""

import itertools
import threading
import time
from collections.abc import Callable


def fire_schedule(
    fire_one: Callable[[int], None],
    *,
    count: int,
    rate: float = 0.0,
    producers: int = 1,
    on_thread_exit: Callable[[], None] = lambda: None,
) -> float:
    """Call ``fire_one(i)`` for i in 0..count-1 from ``producers`` threads; returns the seconds
    it took.

    ``rate`` 0 fires as fast as the producers can (a burst); otherwise event i is fired at
    ``start + i / rate`` (an open-loop schedule: a late event does not delay the next ones).
    ``on_thread_exit`` runs in each producer thread when it is done (to close its database
    connection).
    """
    numbers = itertools.count()
    lock = threading.Lock()
    errors = []
    started = time.perf_counter()

    def produce():
        try:
            while not errors:
                with lock:
                    i = next(numbers)
                if i >= count:
                    return
                if rate:
                    delay = started + i / rate - time.perf_counter()
                    if delay > 0:
                        time.sleep(delay)
                fire_one(i)
        except BaseException as exc:
            errors.append(exc)
            raise
        finally:
            on_thread_exit()

    if producers == 1:
        produce()
    else:
        threads = [threading.Thread(target=produce, daemon=True) for _ in range(producers)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    if errors:
        raise RuntimeError(f"firing failed: {errors[0]!r}") from errors[0]
    return time.perf_counter() - started
