"""The frames of the protocol between the runtime host and a worker (``worker.py``).

A frame is a header (``HEADER``: the JSON's length, the body's length, the call's id), a JSON
object, then the body's bytes as they are (never base64). A message's ``body``, when bytes,
travels as the frame's body; on arrival it is put back in the message (``b""`` when the JSON
had no ``body``). The reader learns a frame's size from its header, before reading it.
A value given as ``RawJSON`` (JSON the host has checked, as it came) is put in the frame's
JSON as it is, not decoded and encoded again.
"""

import json
import struct

HEADER = struct.Struct("!IIQ")


class RawJSON(bytes):
    """A value already encoded as JSON (one value, whole: an object the host parsed and
    checked), written into a frame's JSON as it is."""


def encode(call_id: int, message: dict) -> list[bytes]:
    """The frame's parts (header, JSON, body), to be written one after the other."""
    body = message.get("body")
    if isinstance(body, bytes | bytearray | memoryview):
        message = {key: value for key, value in message.items() if key != "body"}
    else:
        body = b""
    data = _json(message)
    return [HEADER.pack(len(data), len(body), call_id), data, body]


def _json(message: dict) -> bytes:
    encoded = {key: value for key, value in message.items() if not isinstance(value, RawJSON)}
    data = json.dumps(encoded, separators=(",", ":")).encode()
    for key, value in message.items():
        if isinstance(value, RawJSON):  # after the others: ``{...,"key":value}``
            member = json.dumps(key).encode() + b":" + value
            data = data[:-1] + (b"," if len(data) > 2 else b"") + member + b"}"
    return data


def decode(data: bytes, body: bytes) -> dict:
    """The message of a frame's JSON and body; ValueError when the JSON is not an object."""
    message = json.loads(data)
    if not isinstance(message, dict):
        raise ValueError("a frame's JSON must be an object")
    message.setdefault("body", body)
    return message
