"""The Request an integration's ``fetch`` receives and the Response it returns."""

import json
from collections.abc import MutableMapping
from functools import partial
from http import HTTPStatus
from urllib.parse import parse_qsl, urlsplit


class CaseInsensitiveDict(MutableMapping):
    """Header names compared without case; the spelling last set is kept."""

    def __init__(self, data=None):
        self._items: dict[str, tuple[str, str]] = {}
        self.update(data or {})

    def __setitem__(self, key, value):
        self._items[key.lower()] = (key, value)

    def __getitem__(self, key):
        return self._items[key.lower()][1]

    def __delitem__(self, key):
        del self._items[key.lower()]

    def __iter__(self):
        return (key for key, _ in self._items.values())

    def __len__(self):
        return len(self._items)

    def __repr__(self):
        return repr(dict(self.items()))


class _BuilderOrReader:
    """``Response.json(data)`` builds a response; ``response.json()`` reads one's body."""

    def __init__(self, build, read):
        self.build, self.read = build, read

    def __get__(self, instance, owner):
        return partial(self.build, owner) if instance is None else partial(self.read, instance)


class _Message:
    body: bytes
    headers: CaseInsensitiveDict

    def _read_text(self) -> str:
        return self.body.decode(_charset(self.headers.get("content-type")), errors="replace")

    def _read_json(self):
        return json.loads(self.body)


def _charset(content_type: str | None) -> str:
    for parameter in (content_type or "").split(";")[1:]:
        key, _, value = parameter.strip().partition("=")
        if key.lower() == "charset" and value:
            return value.strip('"')
    return "utf-8"


def _as_bytes(body) -> bytes:
    if body is None:
        return b""
    if isinstance(body, str):
        return body.encode()
    if isinstance(body, bytes | bytearray | memoryview):
        return bytes(body)
    raise TypeError(f"a body is bytes or str, not {type(body).__name__}")


class Request(_Message):
    """An HTTP request relayed by the platform: the raw body is kept byte for byte; ``query``
    holds the last value of each query parameter.

    ``route`` is the path below the public endpoint it was sent to (``/oauth`` for
    ``{publicEndpoint}/oauth``); it is the whole path when the URL is not below one.
    """

    def __init__(self, method: str, url: str, headers=None, body=b"", route: str | None = None):
        self.method = method.upper()
        self.url = url
        self.headers = CaseInsensitiveDict(headers or {})
        self.body = _as_bytes(body)
        parts = urlsplit(url)
        self.path = parts.path or "/"
        self.query = dict(parse_qsl(parts.query, keep_blank_values=True))
        self.route = route if route is not None else self.path

    def json(self):
        """The body parsed as JSON."""
        return self._read_json()

    def text(self) -> str:
        """The body decoded with its declared charset (UTF-8 by default)."""
        return self._read_text()

    def __repr__(self):
        return f"<Request {self.method} {self.url}>"


class Response(_Message):
    """An HTTP response: ``Response(status, headers, body)``, or built with a helper."""

    def __init__(self, status: int = 200, headers=None, body=b""):
        if not (isinstance(status, int) and 100 <= status <= 599):
            raise ValueError(f"a response status is an int from 100 to 599, not {status!r}")
        self.status = status
        self.headers = CaseInsensitiveDict(headers or {})
        self.body = _as_bytes(body)

    @property
    def ok(self) -> bool:
        return self.status < 400

    @property
    def reason(self) -> str:
        try:
            return HTTPStatus(self.status).phrase
        except ValueError:
            return "Unknown"

    def _build_json(cls, data, status: int = 200, headers=None) -> "Response":
        return cls(
            status,
            {"Content-Type": "application/json", **(headers or {})},
            json.dumps(data).encode(),
        )

    def _build_text(cls, content: str, status: int = 200, headers=None) -> "Response":
        return cls(
            status, {"Content-Type": "text/plain; charset=utf-8", **(headers or {})}, content
        )

    json = _BuilderOrReader(_build_json, _Message._read_json)
    text = _BuilderOrReader(_build_text, _Message._read_text)

    @classmethod
    def html(cls, content: str, status: int = 200, headers=None) -> "Response":
        return cls(status, {"Content-Type": "text/html; charset=utf-8", **(headers or {})}, content)

    @classmethod
    def redirect(cls, url: str, status: int = 302) -> "Response":
        return cls(status, {"Location": url})

    def __repr__(self):
        return f"<Response {self.status}>"
