"""The embedded broker never hands a consumer a message that is still being written."""

import threading

import pytest
from kombu import Connection

from docplatform.broker import Transport

MESSAGES = 300
PADDING = "x" * 256 * 1024  # a longer write: a consumer polling meanwhile sees the file


def connection(folder) -> Connection:
    options = {
        "data_folder_in": str(folder),
        "data_folder_out": str(folder),
        "control_folder": str(folder / "control"),
        "polling_interval": 0,
    }
    return Connection("filesystem://", transport=Transport, transport_options=options)


@pytest.mark.slow
def test_every_message_arrives_whole_while_it_is_being_written(tmp_path):
    received, errors = [], []

    def consume():
        with connection(tmp_path) as conn:
            queue = conn.SimpleQueue("jobs")
            while len(received) < MESSAGES:
                try:
                    message = queue.get(timeout=5)
                except queue.Empty:
                    return
                except Exception as exc:  # a half-written file fails to decode
                    errors.append(exc)
                    return
                received.append(message.payload["n"])
                message.ack()

    with connection(tmp_path) as conn:
        queue = conn.SimpleQueue("jobs")  # declared before the consumer starts
        consumer = threading.Thread(target=consume)
        consumer.start()
        for n in range(MESSAGES):
            queue.put({"n": n, "padding": PADDING})
    consumer.join(timeout=60)

    assert errors == []
    assert sorted(received) == list(range(MESSAGES))
    assert list(tmp_path.glob("*.partial")) == []


def test_a_connection_to_the_folder_warns_of_no_missing_host(tmp_path, caplog):
    """``make run``'s worker and beat connect without a word about a hostname."""
    with caplog.at_level("WARNING", logger="kombu.connection"), connection(tmp_path) as conn:
        assert conn.info()["transport"] == Transport
    assert [record.getMessage() for record in caplog.records] == []
