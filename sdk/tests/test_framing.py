"""The frames between the runtime host and a worker: what one side encodes, the other reads."""

import json

import pytest
from docplatform_sdk.framing import HEADER, RawJSON, decode, encode


def read(parts: list[bytes]) -> tuple[int, dict]:
    header, data, body = parts
    data_length, body_length, call_id = HEADER.unpack(header)
    assert (len(data), len(body)) == (data_length, body_length)
    return call_id, decode(data, body)


@pytest.mark.parametrize(
    "message",
    [
        {"status": 200, "headers": [["X-A", "1"]], "outcome": "ok"},
        {"call": RawJSON(b'{"event": {"type": "fetch"},\n "environment": {}}')},
        {"call": RawJSON(b" [1, 2] "), "note": "after", "n": 3},
        {"call": RawJSON(b'"\\u00e9"'), "body": b"\xff\x00raw"},
    ],
)
def test_a_message_reads_back_as_it_was_given(message):
    call_id, read_back = read(encode(7, message))
    assert call_id == 7
    expected = {
        key: json.loads(value) if isinstance(value, RawJSON) else value
        for key, value in message.items()
    }
    assert read_back == {"body": b"", **expected}


def test_raw_json_is_carried_as_it_came():
    """Not decoded and encoded again: its bytes are in the frame's JSON."""
    raw = RawJSON(b'{"b": 1,   "a": [ 2 ]}')
    _, data, _ = encode(1, {"call": raw, "body": b"x"})
    assert data == b'{"call":' + raw + b"}"
